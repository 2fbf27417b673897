import { MockActivityEnvironment } from '@temporalio/testing';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createSearchActivities } from '../../activities/search';
import { createAccount } from '../../src/accounts/service';
import { migrateLatest } from '../../src/db';
import { unitOfWork } from '../../src/db/unitOfWork';
import { createEventLog } from '../../src/events/service';
import { createLogger } from '../../src/logger';
import type { PdfTextExtractor } from '../../src/pdf/text';
import type { SearchBackend } from '../../src/search/backend';
import { createSearchWake } from '../../src/search/wake';
import { openScratchDatabase } from '../support/scratchDatabase';

// An idle search indexer looks for new events less and less often, and an event committed in its own
// process brings it back at once. The index is a stand-in that counts the indexer's looks, and the
// indexer's waits last until the test ends them, so what is checked is the waits it asks for, not a clock.

const noText: PdfTextExtractor = { processes: 1, fileDir: '/nonexistent', extractText: async () => '', close: async () => undefined };

describe('the search indexer when idle', function () {
  this.timeout(60_000);
  let database: Awaited<ReturnType<typeof openScratchDatabase>>;
  let db: Knex;
  let accountId: string;

  before(async () => {
    database = await openScratchDatabase('search-idle');
    db = database.knex;
    await migrateLatest(db);
    accountId = (await createAccount(db, { email: 'idle@example.com', plan: 'business' })).id;
  });
  after(() => database?.close());

  /** An index whose event cursor never has anything new; `looks` counts the indexer's looks at it. */
  function watchedIndex() {
    const counter = { looks: 0 };
    const search: SearchBackend = {
      kind: 'elasticsearch',
      search: async () => ({ hits: [], hasMore: false, total: 0, totalIsExact: true }),
      events: {
        next: async () => {
          counter.looks++;
          return [];
        },
        advance: async () => undefined,
      },
      index: async () => undefined,
      health: async () => undefined,
      close: async () => undefined,
    };
    return { search, counter };
  }

  /**
   * Runs the indexer for a minute with the waits it asks for held until the test ends them. Its two loops
   * (the events, and the text of new PDFs, of which there is none) find nothing and wait alike: `nextWaits`
   * answers once both wait, with how long each asked for, and `cancel` ends the run.
   */
  function runHeld(wake?: ReturnType<typeof createSearchWake>, idle = { firstMs: 50, maxMs: 60_000 }) {
    const { search, counter } = watchedIndex();
    const environment = new MockActivityEnvironment();
    const held: { ms: number; end: () => void }[] = [];
    let asked = () => {};
    Object.assign(environment.context, {
      sleep: (ms: number) =>
        new Promise<void>((end) => {
          // A wait that ends a woken one's first `firstMs` ends at once: how much of it is left depends on the clock.
          if (ms < idle.firstMs) return end();
          held.push({ ms, end });
          asked();
        }),
    });
    const activities = createSearchActivities({ db, search, pdfText: noText, logger: createLogger('silent'), searchWake: wake, idle });
    const running = environment.run(activities.indexEventsFor, 60_000);
    let seen = 0;
    return {
      counter,
      /** The next wait of each loop, once both asked for one; the waits before them ended (or woken). */
      async nextWaits() {
        if (held.length < seen + 2)
          await new Promise<void>((resolve) => {
            asked = () => {
              if (held.length >= seen + 2) resolve();
            };
          });
        const waits = held.slice(seen, (seen += 2));
        return { ms: waits.map((wait) => wait.ms), end: () => waits.forEach((wait) => wait.end()) };
      },
      async cancel() {
        environment.cancel();
        for (const wait of held) wait.end();
        await running;
      },
    };
  }

  it('waits twice as long after each look that finds nothing, up to its longest wait', async () => {
    const run = runHeld(undefined, { firstMs: 50, maxMs: 400 });
    const asked: number[] = [];
    for (let look = 1; look <= 5; look++) {
      const waits = await run.nextWaits();
      expect(run.counter.looks, 'looks before this wait').to.equal(look);
      expect(waits.ms[0], 'both loops wait alike').to.equal(waits.ms[1]);
      asked.push(waits.ms[0]);
      waits.end();
    }
    await run.cancel();
    expect(asked).to.deep.equal([50, 100, 200, 400, 400]);
  });

  it('looks again at once after an event commits in its process, then backs off again', async () => {
    const wake = createSearchWake();
    const events = createEventLog([wake]);
    const run = runHeld(wake);
    for (const ms of [50, 100, 200]) {
      const waits = await run.nextWaits();
      expect(waits.ms).to.deep.equal([ms, ms]);
      waits.end();
    }
    // A wait of 400 ms, which the test never ends: only the event ends it.
    expect((await run.nextWaits()).ms).to.deep.equal([400, 400]);
    expect(run.counter.looks).to.equal(4);
    // A millisecond into that wait, so that what is left of its first 50 ms once woken is shorter than a first wait.
    const waiting = Date.now();
    while (Date.now() === waiting) await new Promise(setImmediate);
    await events.record(db, accountId, 'document.created', { documentId: 'doc_idle' });
    // Woken, it looks (5), waits the first wait again, looks (6), and doubles from there.
    const first = await run.nextWaits();
    expect(first.ms).to.deep.equal([50, 50]);
    expect(run.counter.looks, 'looks once woken').to.equal(5);
    first.end();
    expect((await run.nextWaits()).ms).to.deep.equal([100, 100]);
    expect(run.counter.looks).to.equal(6);
    await run.cancel();
  });

  it('an event that is rolled back wakes nobody', async () => {
    const wake = createSearchWake();
    const events = createEventLog([wake]);
    let rang = 0;
    const stop = wake.onEvent(() => rang++);
    await unitOfWork(db, async (trx) => {
      await events.record(trx, accountId, 'document.created', { documentId: 'doc_rolled_back' });
      throw new Error('roll back');
    }).catch(() => undefined);
    expect(rang).to.equal(0);
    await events.record(db, accountId, 'document.created', { documentId: 'doc_committed' });
    expect(rang).to.equal(1);
    stop();
    await events.record(db, accountId, 'document.created', { documentId: 'doc_after' });
    expect(rang).to.equal(1);
  });
});
