import type { Middleware } from 'koa';
import type { Config } from '../../config';
import { serverBusy } from '../../errors';
import { clientKey } from './clientAddress';

/** Bodies above this size wait for an upload slot; small requests never queue. */
export const LARGE_BODY_BYTES = 1024 * 1024;

/** Slots that an account already holding one can never take: they are kept for accounts holding none. */
const KEPT_FOR_NEWCOMERS = 1;

/** Who asks for a slot: an account (the client address itself for a request without one) and a client address. */
export interface SlotHolder {
  account: string;
  address: string;
}

export interface UploadSlotLimits {
  /** Slots one client address may hold at once: senders behind one address cannot hold more. */
  perAddress: number;
  /** How long a request waits for a slot before it is answered 503 with Retry-After. */
  maxWaitMs: number;
}

/**
 * At most `slots` holders at once, shared fairly between accounts and client addresses. An address holds
 * at most `perAddress` slots; an account holds at most half the slots (at least one), and an account that
 * already holds one never takes the last free slot, which stays for an account holding none: holders of
 * slots (slow senders among them, until readDeadline's minimum rate ends them) cannot keep a newcomer out.
 * Waiters are served in arrival order among those allowed to take a slot, so one holder's queue never
 * blocks another; a waiter not served within `maxWaitMs` is refused (503) rather than left hanging.
 */
export function createUploadSlots(slots: number, { perAddress = slots, maxWaitMs = 60_000 }: Partial<UploadSlotLimits> = {}) {
  const share = Math.max(1, Math.floor(slots / 2));
  let free = slots;
  const byAccount = new Map<string, number>();
  const byAddress = new Map<string, number>();
  const waiting: { holder: SlotHolder; grant: () => void }[] = [];
  const count = (map: Map<string, number>, key: string, change: number) => {
    const held = (map.get(key) ?? 0) + change;
    if (held > 0) map.set(key, held);
    else map.delete(key);
  };

  const mayTake = ({ account, address }: SlotHolder) => {
    if ((byAddress.get(address) ?? 0) >= perAddress) return false;
    const holding = byAccount.get(account) ?? 0;
    return holding === 0 ? free > 0 : holding < share && free > KEPT_FOR_NEWCOMERS;
  };
  const take = (holder: SlotHolder) => {
    free--;
    count(byAccount, holder.account, 1);
    count(byAddress, holder.address, 1);
  };
  const serveWaiting = () => {
    for (let index = 0; index < waiting.length;) {
      const waiter = waiting[index];
      if (!mayTake(waiter.holder)) {
        index++;
        continue;
      }
      waiting.splice(index, 1);
      take(waiter.holder);
      waiter.grant();
    }
  };
  const wait = (holder: SlotHolder) =>
    new Promise<void>((grant, refuse) => {
      const waiter = {
        holder,
        grant: () => {
          clearTimeout(timer);
          grant();
        },
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(waiter), 1);
        refuse(serverBusy('Every upload slot is taken: try again in a few seconds.', Math.max(1, Math.ceil(maxWaitMs / 2000))));
      }, maxWaitMs);
      waiting.push(waiter);
    });

  return {
    /** Waits for a slot for `holder`; the function returned gives it back (a second call does nothing). Rejects with 503 after `maxWaitMs`. */
    async acquire(holder: SlotHolder): Promise<() => void> {
      // Whoever waits cannot take a slot now (serveWaiting runs on every release), so going first is fair.
      if (mayTake(holder)) take(holder);
      else await wait(holder);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        free++;
        count(byAccount, holder.account, -1);
        count(byAddress, holder.address, -1);
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

/** The limits of an upload pool, as configured. */
export const uploadLimits = (config: Config): UploadSlotLimits => ({
  perAddress: config.MAX_UPLOADS_PER_CLIENT_ADDRESS,
  maxWaitMs: config.UPLOAD_SLOT_WAIT_MS,
});

export type UploadGate = Middleware & { readonly slots: ReturnType<typeof createUploadSlots> };

/**
 * Route middleware that lets at most `slots` large uploads (declared Content-Length over 1 MiB, or a
 * chunked body of unknown length) be read and processed at once, bounding the memory they take, shared
 * between accounts and client addresses as createUploadSlots says. A slot is released however the
 * request ends: success, error (a body under the minimum rate among them), or a client that hung up.
 */
export function uploadGate(slots: number, limits: Partial<UploadSlotLimits> = {}): UploadGate {
  const uploadSlots = createUploadSlots(slots, limits);
  const gate: Middleware = async (ctx, next) => {
    const declared = ctx.request.length;
    const large = declared === undefined ? ctx.get('Transfer-Encoding') !== '' : declared > LARGE_BODY_BYTES;
    if (!large) return next();
    const address = clientKey(ctx.ip);
    const release = await uploadSlots.acquire({ account: ctx.state.account?.id ?? address, address }).catch((error: unknown) => {
      ctx.set('Connection', 'close'); // the body it would have sent is not read
      throw error;
    });
    try {
      await next();
    } finally {
      release();
    }
  };
  return Object.assign(gate, { slots: uploadSlots });
}
