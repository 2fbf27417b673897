import type { Middleware } from 'koa';

/** Bodies above this size wait for an upload slot; small requests never queue. */
export const LARGE_BODY_BYTES = 1024 * 1024;

/** Slots that an account already holding one can never take: they are kept for accounts holding none. */
const KEPT_FOR_NEWCOMERS = 1;

/**
 * At most `slots` holders at once, shared fairly between accounts. An account holds at most half the
 * slots (at least one), and an account that already holds one never takes the last free slot, which
 * stays for an account holding none: accounts that hold slots (slow senders among them, until
 * readDeadline's minimum rate ends them) cannot keep a newcomer out. Waiters are served in arrival
 * order among those allowed to take a slot, so one account's queue never blocks another account.
 */
export function createUploadSlots(slots: number) {
  const share = Math.max(1, Math.floor(slots / 2));
  let free = slots;
  const held = new Map<string, number>();
  const waiting: { accountId: string; grant: () => void }[] = [];

  const mayTake = (accountId: string) => {
    const holding = held.get(accountId) ?? 0;
    return holding === 0 ? free > 0 : holding < share && free > KEPT_FOR_NEWCOMERS;
  };
  const take = (accountId: string) => {
    free--;
    held.set(accountId, (held.get(accountId) ?? 0) + 1);
  };
  const serveWaiting = () => {
    for (let index = 0; index < waiting.length;) {
      const waiter = waiting[index];
      if (!mayTake(waiter.accountId)) {
        index++;
        continue;
      }
      waiting.splice(index, 1);
      take(waiter.accountId);
      waiter.grant();
    }
  };

  return {
    /** Waits for a slot for `accountId`; the function returned gives it back (a second call does nothing). */
    async acquire(accountId: string): Promise<() => void> {
      // Whoever waits cannot take a slot now (serveWaiting runs on every release), so going first is fair.
      if (mayTake(accountId)) take(accountId);
      else await new Promise<void>((grant) => waiting.push({ accountId, grant }));
      let released = false;
      return () => {
        if (released) return;
        released = true;
        free++;
        const holding = (held.get(accountId) ?? 1) - 1;
        if (holding > 0) held.set(accountId, holding);
        else held.delete(accountId);
        serveWaiting();
      };
    },
    /** Slots taken now. */
    get holding() {
      return slots - free;
    },
    /** Requests waiting for a slot. */
    get pending() {
      return waiting.length;
    },
  };
}

export type UploadGate = Middleware & { readonly slots: ReturnType<typeof createUploadSlots> };

/**
 * Route middleware that lets at most `slots` large uploads (declared Content-Length over 1 MiB, or a
 * chunked body of unknown length) be read and processed at once, bounding the memory they take, shared
 * between accounts as createUploadSlots says. A slot is released however the request ends: success,
 * error (a body under the minimum rate among them), or a client that hung up.
 */
export function uploadGate(slots: number): UploadGate {
  const uploadSlots = createUploadSlots(slots);
  const gate: Middleware = async (ctx, next) => {
    const declared = ctx.request.length;
    const large = declared === undefined ? ctx.get('Transfer-Encoding') !== '' : declared > LARGE_BODY_BYTES;
    if (!large) return next();
    const release = await uploadSlots.acquire(ctx.state.account?.id ?? '');
    try {
      await next();
    } finally {
      release();
    }
  };
  return Object.assign(gate, { slots: uploadSlots });
}
