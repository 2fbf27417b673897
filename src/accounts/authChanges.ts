// Keys revoked and plans changed by this process: the API key caches in it forget what they hold at
// once, before PostgreSQL's notification of the same change arrives (src/apiKeys/cache.ts).
const listeners = new Set<() => void>();

export function authChanged() {
  for (const listener of listeners) listener();
}

export function onAuthChanged(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
