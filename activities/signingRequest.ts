import { ApplicationFailure } from '@temporalio/common';
import { isRefusedForGood } from '../src/db/errors';
import { signingRequestLifecycle, type LifecycleDeps } from '../src/signingRequests/lifecycle';
import { databaseRefusal } from '../src/domain/signingRequests';

export type SigningActivityDeps = LifecycleDeps;

/**
 * A change the database refuses for good (its data, not its timing: see isRefusedForGood) fails at once,
 * not retried: retrying repeated the refusal for days while the workflow, which had decided the change,
 * and the database, which never recorded it, disagreed. The workflow takes the refusal back (see
 * `databaseRefusal` in workflows/signingRequest.ts).
 */
function failingForGood<Args extends unknown[], Result>(name: string, work: (...args: Args) => Promise<Result>) {
  return async (...args: Args): Promise<Result> => {
    try {
      return await work(...args);
    } catch (error) {
      if (!isRefusedForGood(error)) throw error;
      throw ApplicationFailure.nonRetryable(`The database refused ${name} for good (SQLSTATE ${error.code}): ${error.message}`, databaseRefusal, error.code);
    }
  };
}

// The signing request workflow's activities are the lifecycle's commands (src/signingRequests/lifecycle.ts):
// each a transaction with its audit step and event, safe to repeat.
export function createSigningActivities(deps: SigningActivityDeps) {
  const lifecycle = signingRequestLifecycle(deps);
  return Object.fromEntries(
    Object.entries(lifecycle).map(([name, work]) => [name, failingForGood(name, work as (...args: unknown[]) => Promise<unknown>)]),
  ) as typeof lifecycle;
}

export type SigningActivities = ReturnType<typeof createSigningActivities>;
