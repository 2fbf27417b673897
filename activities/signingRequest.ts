import { signingRequestLifecycle, type LifecycleDeps } from '../src/signatures/lifecycle';

export type SigningActivityDeps = LifecycleDeps;

// The signing request workflow's activities are the lifecycle's commands (src/signatures/lifecycle.ts):
// each a transaction with its audit step and event, safe to repeat.
export const createSigningActivities = (deps: SigningActivityDeps) => signingRequestLifecycle(deps);

export type SigningActivities = ReturnType<typeof createSigningActivities>;
