import type { Db } from '../src/db';

// Activities are the only code the workflows call that touches the world. They get their
// dependencies from this factory and must be safe to retry: keyed by ids, conditional updates.
export interface ActivityDeps {
  db: Db;
}

export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
