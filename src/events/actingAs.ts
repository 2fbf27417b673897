import { AsyncLocalStorage } from 'node:async_hooks';
import type { Actor } from '../domain/actors';

// The actor of the request being served: set once where a request is authenticated (an API key, a console
// session), read where an action is recorded (every event, a request's sent_by), so that no service between
// the two has to pass it along. Work of the worker has none: its actions are the signers' or Signet's.
const current = new AsyncLocalStorage<Actor>();

export const actingAs = <T>(actor: Actor | undefined, work: () => Promise<T>): Promise<T> => (actor ? current.run(actor, work) : work());

export const currentActor = (): Actor | undefined => current.getStore();
