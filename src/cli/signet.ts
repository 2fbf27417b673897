import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { Command, InvalidArgumentError } from 'commander';
import { listAccounts, setAccountPlan } from '../accounts/service';
import { createAccountWithKey } from './accountWithKey';
import { findAccount, presentAccount } from './accountLookup';
import { clientCommands } from './client';
import { planNames, type Plan } from '../domain/plans';
import { isScope, scopes, type Scope } from '../domain/scopes';
import { createApiKey, listApiKeys, revokeApiKey } from '../apiKeys/service';
import { loadConfig } from '../config';
import { migrateLatest, openDatabase, type Db } from '../db';
import { AppError, conflict } from '../errors';
import { generateSelfSignedP12 } from '../pdf/sealCertificate';
import { reindexAll } from '../search/reindex';
import { prepareSearchAttributes } from '../temporal/searchAttributes';

// The operator's CLI. It reaches the same database as the server: DATABASE_URL, else the embedded
// PGlite in DATA_DIR — through the running server's socket when `npm start` is up, directly otherwise.
// Results go to stdout as JSON (one line), everything else to stderr.

const parsePlan = (value: string): Plan => {
  if (!(planNames as readonly string[]).includes(value)) throw new InvalidArgumentError(`plan must be one of: ${planNames.join(', ')}`);
  return value as Plan;
};

const stderrLog = { info: (_details: object, message: string) => void process.stderr.write(`${message}\n`) };

async function withDatabase(work: (db: Db) => Promise<unknown>) {
  const database = await openDatabase(loadConfig());
  try {
    await migrateLatest(database.knex, stderrLog);
    const result = await work(database.knex);
    if (result !== undefined) process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await database.close();
  }
}

const program = new Command('signet').description('Signet: send PDFs for signature through the API, and the operator commands').showHelpAfterError();

clientCommands(program);

program
  .command('migrate')
  .description('apply database migrations')
  .action(() =>
    withDatabase(async (db) => {
      const applied = await migrateLatest(db, stderrLog);
      process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
    }),
  );

program
  .command('reindex')
  .description('rebuild the Elasticsearch indices from PostgreSQL, then flip their aliases to them')
  .action(() => withDatabase((db) => reindexAll(db, loadConfig())));

const temporalCommand = program.command('temporal').description('the Temporal namespace Signet runs in');
temporalCommand
  .command('setup')
  .description('register the search attributes Signet needs in TEMPORAL_NAMESPACE (every worker start does it too)')
  .action(async () => {
    const config = loadConfig();
    if (!config.TEMPORAL_ADDRESS) throw new Error('TEMPORAL_ADDRESS is not set: the embedded dev server is prepared by `npm start` itself');
    const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    try {
      await prepareSearchAttributes(connection, config.TEMPORAL_NAMESPACE, stderrLog);
      process.stderr.write(`namespace ${config.TEMPORAL_NAMESPACE} is ready\n`);
    } finally {
      await connection.close();
    }
  });

program
  .command('seal-certificate <file>')
  .description('write a self-signed seal certificate (PKCS#12, empty password) for SEAL_P12_PATH; use your own CA-issued one where signers expect it')
  .action(async (file: string) => {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    fs.writeFileSync(file, await generateSelfSignedP12(), { flag: 'wx', mode: 0o600 });
    process.stderr.write(`wrote ${file}\n`);
  });

const account = program.command('account').description('manage accounts');
account
  .command('create')
  .requiredOption('--email <email>', 'account owner e-mail')
  .option('--plan <plan>', `${planNames.join(' | ')}`, parsePlan, 'free')
  .option('--name <name>', 'sender name shown to signers')
  .description('create an account (its address vouched for by you, the operator) and its first API key')
  .action((options: { email: string; plan: Plan; name?: string }) =>
    withDatabase(async (db) => {
      const { account: created, apiKey } = await createAccountWithKey(db, options).catch(async (error) => {
        if (!(error instanceof AppError && error.code === 'conflict')) throw error;
        const existing = await findAccount(db, options.email);
        throw conflict(
          `The account ${existing.id} has the e-mail ${existing.email} already. A new API key for it: npx signet key create --email ${existing.email}`,
        );
      });
      return { accountId: created.id, apiKey };
    }),
  );
account
  .command('list')
  .description('list every account: its id, e-mail and plan')
  .action(() => withDatabase(async (db) => (await listAccounts(db)).map(presentAccount)));
account
  .command('show <account>')
  .description('one account, by its id (acct_…) or its e-mail, with its API keys (never the keys themselves)')
  .action((idOrEmail: string) =>
    withDatabase(async (db) => {
      const found = await findAccount(db, idOrEmail);
      return { ...presentAccount(found), apiKeys: await listApiKeys(db, found.id) };
    }),
  );
account
  .command('plan <account> <plan>')
  .description('change the plan of an account, named by its id (acct_…) or its e-mail')
  .action((idOrEmail: string, plan: string) =>
    withDatabase(async (db) => {
      const updated = await setAccountPlan(db, (await findAccount(db, idOrEmail)).id, parsePlan(plan));
      return { accountId: updated.id, plan: updated.plan };
    }),
  );

const parseScopes = (list: string): Scope[] => {
  const given = list.split(',').map((scope) => scope.trim());
  if (!given.every(isScope)) throw new InvalidArgumentError(`scopes must be among: ${scopes.join(', ')}`);
  return given;
};

const parseDays = (value: string): number => {
  const days = Number(value);
  if (!Number.isInteger(days) || days < 1) throw new InvalidArgumentError('a whole number of days, 1 or more');
  return days;
};

/** The account a key command names: `--account acct_…` or `--email owner@example.com`, one of them. */
async function accountOf(db: Db, options: { account?: string; email?: string }) {
  if (Boolean(options.account) === Boolean(options.email)) throw new InvalidArgumentError('name the account: --account acct_… or --email owner@example.com');
  return findAccount(db, (options.account ?? options.email)!);
}

const key = program.command('key').description('manage API keys');
key
  .command('create')
  .option('--account <accountId>', 'the account, by its id (acct_…)')
  .option('--email <email>', 'the account, by its e-mail (instead of --account)')
  .option('--name <name>', 'a label for the key', 'default')
  .option('--scopes <scopes>', `what the key may do, comma-separated among ${scopes.join(', ')}; default all`, parseScopes)
  .option('--expires-in-days <days>', 'the key stops working after that many days; default never', parseDays)
  .description('create an API key of an account, e.g. in place of a lost one; it is shown only once')
  .action((options: { account?: string; email?: string; name: string; scopes?: Scope[]; expiresInDays?: number }) =>
    withDatabase(async (db) => {
      const { id: accountId } = await accountOf(db, options);
      const { apiKey, secret } = await createApiKey(db, accountId, options.name, {
        scopes: options.scopes ?? null,
        expiresAt: options.expiresInDays === undefined ? null : new Date(Date.now() + options.expiresInDays * 86_400_000),
      });
      return { keyId: apiKey.id, accountId, name: apiKey.name, scopes: apiKey.scopes ?? 'all', expiresAt: apiKey.expiresAt, apiKey: secret };
    }),
  );
key
  .command('list')
  .option('--account <accountId>', 'the account, by its id (acct_…)')
  .option('--email <email>', 'the account, by its e-mail (instead of --account)')
  .description('list the API keys of an account (never the keys themselves)')
  .action((options: { account?: string; email?: string }) => withDatabase(async (db) => listApiKeys(db, (await accountOf(db, options)).id)));
key
  .command('revoke <keyId>')
  .description('revoke an API key at once')
  .action((keyId: string) =>
    withDatabase(async (db) => {
      const revoked = await revokeApiKey(db, keyId);
      return { keyId: revoked.id, revokedAt: revoked.revokedAt };
    }),
  );

program.parseAsync().catch((error) => {
  const message = error instanceof AppError ? [error.message, ...(error.details ?? [])].join(' ') : error instanceof Error ? error.message : String(error);
  process.stderr.write(`signet: ${message}\n`);
  process.exit(1);
});
