import type { Middleware } from 'koa';

/** Bodies above this size wait for an upload slot; small requests never queue. */
export const LARGE_BODY_BYTES = 1024 * 1024;

/** A counting semaphore: at most `slots` holders at once, the rest wait in arrival order. */
export function createSemaphore(slots: number) {
  let free = slots;
  const waiting: (() => void)[] = [];
  return {
    async acquire(): Promise<() => void> {
      if (free > 0) free--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const next = waiting.shift();
        if (next) next(); // hand the slot over directly
        else free++;
      };
    },
    get pending() {
      return waiting.length;
    },
  };
}

/**
 * Route middleware that lets at most `slots` large uploads (declared Content-Length over 1 MiB, or a
 * chunked body of unknown length) be read and processed at once, bounding the memory they take.
 * The slot is released however the request ends: success, error, or a client that hung up.
 */
export function uploadGate(slots: number): Middleware {
  const semaphore = createSemaphore(slots);
  return async (ctx, next) => {
    const declared = ctx.request.length;
    const large = declared === undefined ? ctx.get('Transfer-Encoding') !== '' : declared > LARGE_BODY_BYTES;
    if (!large) return next();
    const release = await semaphore.acquire();
    try {
      await next();
    } finally {
      release();
    }
  };
}
