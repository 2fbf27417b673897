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
 * One account holds at most half the slots (at least one), so its slow or stalled uploads never hold
 * another account's. A slot is released however the request ends: success, error, or a client that hung up.
 */
export function uploadGate(slots: number): Middleware {
  const semaphore = createSemaphore(slots);
  const share = Math.max(1, Math.floor(slots / 2));
  const perAccount = new Map<string, ReturnType<typeof createSemaphore> & { holders: number }>();
  return async (ctx, next) => {
    const declared = ctx.request.length;
    const large = declared === undefined ? ctx.get('Transfer-Encoding') !== '' : declared > LARGE_BODY_BYTES;
    if (!large) return next();
    const accountId: string = ctx.state.account?.id ?? '';
    let account = perAccount.get(accountId);
    if (!account) perAccount.set(accountId, (account = Object.assign(createSemaphore(share), { holders: 0 })));
    account.holders++;
    const releaseAccount = await account.acquire();
    const release = await semaphore.acquire();
    try {
      await next();
    } finally {
      release();
      releaseAccount();
      if (--account.holders === 0) perAccount.delete(accountId);
    }
  };
}
