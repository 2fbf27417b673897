import { createSigningActivities, type SigningActivityDeps } from './signingRequest';

// Activities are the only code the workflows call that touches the world. They get their
// dependencies from this factory and must be safe to retry: keyed by ids, conditional updates.
export type ActivityDeps = SigningActivityDeps;

export function createActivities(deps: ActivityDeps) {
  return { ...createSigningActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
