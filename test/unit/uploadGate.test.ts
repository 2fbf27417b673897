import { expect } from 'chai';
import { createUploadSlots } from '../../src/api/middleware/uploadGate';

// How upload slots are shared between accounts (the sockets' side is in test/integration/slowUploads.test.ts).

/** Whether `acquire` has been granted, without waiting for it. */
function track(promise: Promise<() => void>) {
  const state: { release?: () => void } = {};
  void promise.then((release) => (state.release = release));
  return state;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('upload slots', () => {
  it('an account holding a slot never takes the last free one: it is kept for an account holding none', async () => {
    const slots = createUploadSlots(4);
    const a1 = track(slots.acquire('a'));
    const a2 = track(slots.acquire('a'));
    const b1 = track(slots.acquire('b'));
    const b2 = track(slots.acquire('b'));
    await settle();
    expect([a1, a2, b1, b2].map((one) => Boolean(one.release))).to.deep.equal([true, true, true, false]);
    const c = track(slots.acquire('c'));
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
    const a1 = track(slots.acquire('a'));
    const a2 = track(slots.acquire('a'));
    const b1 = track(slots.acquire('b'));
    await settle();
    expect([a1, a2, b1].map((one) => Boolean(one.release))).to.deep.equal([true, false, true]);
    a1.release!();
    a1.release!(); // a second release gives nothing back twice
    await settle();
    expect(a2.release).to.be.a('function');
    expect([slots.holding, slots.pending]).to.deep.equal([2, 0]);
  });
});
