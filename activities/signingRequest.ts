import { signingRequestLifecycle, type LifecycleDeps } from '../src/signingRequests/lifecycle';

export type SigningActivityDeps = LifecycleDeps;

// The signing request workflow's activities are the lifecycle's commands (src/signingRequests/lifecycle.ts):
// each a transaction with its audit step and event, safe to repeat.
export const createSigningActivities = (deps: SigningActivityDeps) => signingRequestLifecycle(deps);

export type SigningActivities = ReturnType<typeof createSigningActivities>;
