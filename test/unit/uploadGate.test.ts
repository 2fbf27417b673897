import { expect } from 'chai';
import { createUploadSlots } from '../../src/api/middleware/uploadGate';
import { AppError } from '../../src/errors';

// How upload slots are shared between accounts (the sockets' side is in test/integration/slowUploads.test.ts).

/** Whether `acquire` has been granted, without waiting for it. */
function track(promise: Promise<() => void>) {
  const state: { release?: () => void } = {};
  void promise.then((release) => (state.release = release));
  return state;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

let clients = 0;
/** An account's upload from a client address of its own. */
const holder = (account: string, address = `client ${clients++}`) => ({ account, address });

describe('upload slots', () => {
  it('an account holding a slot never takes the last free one: it is kept for an account holding none', async () => {
    const slots = createUploadSlots(4);
    const a1 = track(slots.acquire(holder('a')));
    const a2 = track(slots.acquire(holder('a')));
    const b1 = track(slots.acquire(holder('b')));
    const b2 = track(slots.acquire(holder('b')));
    await settle();
    expect([a1, a2, b1, b2].map((one) => Boolean(one.release))).to.deep.equal([true, true, true, false]);
    const c = track(slots.acquire(holder('c')));
    await settle();
    expect(c.release, 'the newcomer goes before b’s second upload').to.be.a('function');
    expect([slots.holding, slots.pending]).to.deep.equal([4, 1]);
    c.release!();
    await settle();
    expect(b2.release, 'b may not take the last slot even when it frees').to.equal(undefined);
    a1.release!();
    await settle();
    expect(b2.release, 'two free: b takes one and leaves the last').to.be.a('function');
  });

  it('an account holds at most half the slots, and its waiting uploads never hold up another account', async () => {
    const slots = createUploadSlots(2);
    const a1 = track(slots.acquire(holder('a')));
    const a2 = track(slots.acquire(holder('a')));
    const b1 = track(slots.acquire(holder('b')));
    await settle();
    expect([a1, a2, b1].map((one) => Boolean(one.release))).to.deep.equal([true, false, true]);
    a1.release!();
    a1.release!(); // a second release gives nothing back twice
    await settle();
    expect(a2.release).to.be.a('function');
    expect([slots.holding, slots.pending]).to.deep.equal([2, 0]);
  });

  it('a client address holds at most `perAddress` slots, whatever the accounts it sends for; another address is served', async () => {
    const slots = createUploadSlots(4, { perAddress: 1 });
    const first = track(slots.acquire(holder('a', 'one address')));
    const second = track(slots.acquire(holder('b', 'one address')));
    const elsewhere = track(slots.acquire(holder('c', 'another address')));
    await settle();
    expect([first, second, elsewhere].map((one) => Boolean(one.release))).to.deep.equal([true, false, true]);
    first.release!();
    await settle();
    expect(second.release, 'served once the address holds none').to.be.a('function');
  });

  it('a waiter is refused with 503 server_busy and Retry-After after `maxWaitMs`, and leaves the queue', async () => {
    const slots = createUploadSlots(1, { maxWaitMs: 50 });
    const held = await slots.acquire(holder('a'));
    const refused = await slots.acquire(holder('b')).then(
      () => undefined,
      (error: AppError) => error,
    );
    expect(refused).to.be.instanceOf(AppError);
    expect([refused!.status, refused!.code, refused!.headers['Retry-After']]).to.deep.equal([503, 'server_busy', '1']);
    expect([slots.holding, slots.pending]).to.deep.equal([1, 0]);
    held();
    (await slots.acquire(holder('b')))();
    expect(slots.holding).to.equal(0);
  });
});
