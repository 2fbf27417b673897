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
// process brings it back at once. The index is a stand-in that notes when the indexer looks.

const noText: PdfTextExtractor = { processes: 1, fileDir: '/nonexistent', extractText: async () => '', close: async () => undefined };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

  /** An index whose event cursor never has anything new, and the times at which the indexer looked. */
  function watchedIndex() {
    const looks: number[] = [];
    const search: SearchBackend = {
      kind: 'elasticsearch',
      search: async () => ({ hits: [], hasMore: false, total: 0, totalIsExact: true }),
      events: {
        next: async () => {
          looks.push(Date.now());
          return [];
        },
        advance: async () => undefined,
      },
      index: async () => undefined,
      health: async () => undefined,
      close: async () => undefined,
    };
    return { search, looks };
  }

  /** Resolves once `looks` holds `count` entries. */
  async function lookNumber(looks: number[], count: number) {
    while (looks.length < count) await sleep(10);
    return looks[count - 1];
  }

  const activitiesOn = (search: SearchBackend, wake?: ReturnType<typeof createSearchWake>) =>
    createSearchActivities({ db, search, pdfText: noText, logger: createLogger('silent'), searchWake: wake, idle: { firstMs: 50, maxMs: 60_000 } });

  it('waits twice as long after each look that finds nothing', async () => {
    const { search, looks } = watchedIndex();
    await new MockActivityEnvironment().run(activitiesOn(search).indexEventsFor, 3_000);
    // Waits of 50, 100, 200, 400, 800 and 1,600 ms: 6 looks in 3 s (a poll every 50 ms would be 60, every 200 ms 15).
    expect(looks.length).to.be.within(5, 8);
    const gaps = looks.slice(1).map((at, index) => at - looks[index]);
    for (const [index, gap] of gaps.entries()) expect(gap, `wait ${index + 1}`).to.be.at.least(50 * 2 ** index - 5);
  });

  it('looks again soon after an event commits in its process, then backs off again', async () => {
    const wake = createSearchWake();
    const events = createEventLog([wake]);
    const { search, looks } = watchedIndex();
    const running = new MockActivityEnvironment().run(activitiesOn(search, wake).indexEventsFor, 8_000);
    // Look 7 is followed by a wait of 3.2 s; an event committed just after it ends that wait 50 ms in.
    const seventh = await lookNumber(looks, 7);
    expect(seventh - looks[0], 'from look 1 to look 7').to.be.at.least(3_000); // 50 + 100 + … + 1,600 ms
    await events.record(db, accountId, 'document.created', { documentId: 'doc_idle' });
    const committed = Date.now();
    const next = await lookNumber(looks, 8);
    expect(next - committed, 'from the commit to the next look').to.be.below(2_000);
    expect(next - seventh, 'from look 7 to look 8').to.be.below(3_000);
    // Back to the first wait, and doubling again from there.
    const ninth = await lookNumber(looks, 9);
    const tenth = await lookNumber(looks, 10);
    expect(ninth - next).to.be.within(45, 1_500);
    expect(tenth - ninth).to.be.at.least(95);
    await running;
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
