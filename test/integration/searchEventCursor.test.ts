import { expect } from 'chai';
import { createEventLog } from '../../src/events/service';
import { eventCursor, oldestRunning } from '../../src/search/eventCursor';
import { createTestAccount, databaseKind } from '../support/system';

// The search indexer's place in the events (src/search/eventCursor.ts), on the shared system's
// database: other tests' events pass by too, so each check looks only at the events it wrote.
describe('the search indexer follows the events with a cursor', () => {
  let n = 0;
  const events = createEventLog([]); // the cursor reads the events table, whatever else consumes them
  const prefix = () => `signet-test-cursor-${databaseKind}-${process.pid}-${n++}-`;

  async function setUp() {
    const { db, account } = await createTestAccount();
    const write = (trx = db) =>
      events.record(trx, account.id, 'document.updated', { documentId: `doc_cursor_${n}_${Math.random()}` }).then((event) => event.id);
    return { db, write };
  }

  it('takes events in the order they were written, a batch at a time, and never moves back', async () => {
    const { db, write } = await setUp();
    const cursor = eventCursor(db, prefix());
    await cursor.start(await oldestRunning(db));
    const mine = [await write(), await write(), await write()];
    const mineIn = (events: { id: string }[]) => events.map((event) => event.id).filter((id) => mine.includes(id));

    const all = await cursor.next(10_000);
    expect(mineIn(all)).to.deep.equal(mine);
    const firstTwo = all.slice(0, all.findIndex((event) => event.id === mine[1]) + 1);
    await cursor.advance(firstTwo[firstTwo.length - 1]);
    expect(mineIn(await cursor.next(10_000))).to.deep.equal([mine[2]]);

    await cursor.advance(all[0]); // an indexer behind another: the cursor stays where it is
    expect(mineIn(await cursor.next(10_000))).to.deep.equal([mine[2]]);
    await cursor.advance(all[all.length - 1]);
    expect(mineIn(await cursor.next(10_000))).to.deep.equal([]);
  });

  it('starts a new index after the events its build read, an existing one where it was', async () => {
    const { db, write } = await setUp();
    const before = await write();
    const fresh = eventCursor(db, prefix());
    await fresh.start(await oldestRunning(db)); // indices just built: `before` is in them
    const after = await write();
    expect((await fresh.next(10_000)).map((event) => event.id))
      .to.include(after)
      .and.not.include(before);

    // Indices that already existed (the upgrade from marking each event): from the first event.
    const upgraded = eventCursor(db, prefix());
    await upgraded.start(null);
    const seen = (await upgraded.next(1_000_000)).map((event) => event.id);
    expect(seen).to.include.members([before, after]);

    const advanced = (await fresh.next(10_000)).find((event) => event.id === after)!;
    await fresh.advance(advanced);
    await fresh.start(await oldestRunning(db)); // a second start (another process) moves nothing
    expect((await fresh.next(10_000)).map((event) => event.id)).to.not.include(after);
  });

  // One PGlite database has one session: no two transactions run at once there.
  if (databaseKind === 'postgres') {
    it('waits for a transaction still running, and does not pass the events committed after it began', async () => {
      const { db, write } = await setUp();
      const cursor = eventCursor(db, prefix());
      await cursor.start(await oldestRunning(db));
      const slow = await db.transaction();
      try {
        const early = await write(slow);
        const late = await write();
        const ids = async () => (await cursor.next(10_000)).map((event) => event.id);
        expect(await ids())
          .to.not.include(early)
          .and.not.include(late);
        await cursor.advance((await cursor.next(10_000)).at(-1) ?? { id: '', xid: '0', data: null });
        await slow.commit();
        const now = await ids();
        expect(now).to.include(early).and.include(late);
        expect(now.indexOf(early)).to.be.lessThan(now.indexOf(late)); // written first, though committed last
      } finally {
        if (!slow.isCompleted()) await slow.rollback();
      }
    });
  }
});
