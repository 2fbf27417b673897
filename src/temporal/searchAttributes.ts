import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { ProgressLog } from '../logger';
import { searchAttributes } from '../../workflows/definitions';

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
const names = Object.values(searchAttributes).map(({ name }) => name);
const VISIBLE_WITHIN_MS = 60_000;

/** What an operator runs to add the attributes by hand, where Signet may not (Temporal Cloud, a locked-down cluster). */
export function howToAddSearchAttributes(namespace: string) {
  return [
    `Signet needs these Keyword search attributes in the Temporal namespace "${namespace}": ${names.join(', ')}.`,
    'Add them with one of:',
    `  temporal operator search-attribute create --namespace ${namespace} ${names.map((name) => `--name ${name} --type Keyword`).join(' ')}`,
    `  tcld namespace search-attributes add --namespace ${namespace}.<account> ${names.map((name) => `--search-attribute "${name}=Keyword"`).join(' ')}   (Temporal Cloud)`,
    'or run `npx signet temporal setup` with a key allowed to change the namespace.',
  ].join('\n');
}

/**
 * Makes sure the namespace has Signet's custom search attributes: adds the missing ones through the
 * operator API, then waits until the frontend accepts queries on them (a new mapping reaches its
 * namespace cache some seconds after the add). Idempotent. When the server refuses, the error says
 * exactly what to add and how.
 */
export async function prepareSearchAttributes(connection: Connection, namespace: string, logger: ProgressLog) {
  logger.info({ namespace }, 'checking Temporal search attributes');
  const missing = await missingSearchAttributes(connection, namespace);
  if (missing.length) {
    logger.info({ namespace, searchAttributes: missing }, 'registering Temporal search attributes');
    try {
      await answered(
        connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])) }),
      );
    } catch (error) {
      // Another process may have added them in the meantime; only a refusal that leaves some missing counts.
      if ((await missingSearchAttributes(connection, namespace)).length) throw refused(namespace, error);
    }
  }
  await waitUntilQueryable(connection, namespace);
}

async function missingSearchAttributes(connection: Connection, namespace: string) {
  let custom: Record<string, temporal.api.enums.v1.IndexedValueType>;
  try {
    custom = (await answered(connection.operatorService.listSearchAttributes({ namespace }))).customAttributes ?? {};
  } catch (error) {
    throw refused(namespace, error);
  }
  const wrongType = names.filter((name) => name in custom && custom[name] !== KEYWORD);
  if (wrongType.length)
    throw new Error(
      `Temporal search attributes ${wrongType.join(', ')} exist in namespace "${namespace}" with a type other than Keyword; Signet needs them as Keyword.`,
    );
  return names.filter((name) => !(name in custom));
}

/** A workflow start is checked against the same namespace cache as a visibility query. */
async function waitUntilQueryable(connection: Connection, namespace: string) {
  const query = names.map((name) => `${name} = ''`).join(' AND ');
  const deadline = Date.now() + VISIBLE_WITHIN_MS;
  for (;;) {
    try {
      await answered(connection.workflowService.countWorkflowExecutions({ namespace, query }));
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(
          `Temporal search attributes ${names.join(', ')} were added but are still not usable in namespace "${namespace}" after ${VISIBLE_WITHIN_MS / 1000} s: ${(error as Error).message}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

// A server that does not answer must not hold a starting process (and the lock it holds) forever.
const CALL_MS = 10_000;
function answered<T>(call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer from Temporal within ${CALL_MS / 1000} s`)), CALL_MS)));
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
}

function refused(namespace: string, error: unknown) {
  // gRPC messages start with their status ("7 PERMISSION_DENIED: …").
  return new Error(`The Temporal server refused to register search attributes: ${(error as Error).message}\n${howToAddSearchAttributes(namespace)}`);
}
