import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createAccount } from '../../src/accounts/service';
import { migrateLatest } from '../../src/db';
import { newId } from '../../src/ids';
import type { PdfTextExtractor } from '../../src/pdf/text';
import type { ResourceRef, SearchBackend } from '../../src/search/backend';
import { indexNewTexts } from '../../src/search/indexer';
import { insertDocument } from '../support/factories';
import { openScratchDatabase } from '../support/scratchDatabase';
import { eventually } from '../support/signing';

const sha256 = (bytes: Uint8Array) => crypto.createHash('sha256').update(bytes).digest('hex');

// The search indexer's text step (indexNewTexts) on a database of its own, with an extractor and an index
// that the test controls: which documents are extracted, how many at once, and what the index receives.

/**
 * An extractor of `processes` processes whose every PDF takes `ms`, the PDFs beyond them queued, as in the
 * real pool; it notes the most PDFs it extracted at once, and the most it held (extracting or queued).
 * The text of a small PDF is its bytes; of a large one, the SHA-256 of its temporary file (in `fileDir`).
 */
function fakeExtractor(processes: number, ms: number, fileDir = '/nonexistent') {
  let running = 0;
  let held = 0;
  const waiting: (() => void)[] = [];
  const extracted: string[] = [];
  const extractor: PdfTextExtractor & { extracted: string[]; mostAtOnce: number; mostHeld: number } = {
    processes,
    fileDir,
    extracted,
    mostAtOnce: 0,
    mostHeld: 0,
    async extractText({ bytes, path: filePath }) {
      extractor.mostHeld = Math.max(extractor.mostHeld, ++held);
      if (running === processes) await new Promise<void>((resolve) => waiting.push(resolve));
      running++;
      extractor.mostAtOnce = Math.max(extractor.mostAtOnce, running);
      await new Promise((resolve) => setTimeout(resolve, ms));
      running--;
      held--;
      waiting.shift()?.();
      const text = filePath ? `the file of sha256 ${sha256(fs.readFileSync(filePath))}` : `the text of ${Buffer.from(bytes!).toString()}`;
      extracted.push(text);
      return text;
    },
    close: async () => undefined,
  };
  return extractor;
}

/** An index that takes `ms` per write, and refuses the writes `refuse` says to; it notes the most writes it had at once. */
function fakeIndex(ms: number, refuse: (write: number) => boolean = () => false) {
  const writes: string[][] = [];
  let running = 0;
  const index: SearchBackend & { writes: string[][]; mostAtOnce: number } = {
    kind: 'postgres',
    writes,
    mostAtOnce: 0,
    search: () => Promise.reject(new Error('not searched here')),
    async index(refs: ResourceRef[]) {
      index.mostAtOnce = Math.max(index.mostAtOnce, ++running);
      await new Promise((resolve) => setTimeout(resolve, ms));
      running--;
      if (refuse(writes.length + 1)) {
        writes.push([]);
        throw new Error('index unavailable');
      }
      writes.push(refs.map((ref) => ref.id));
    },
    health: async () => undefined,
    close: async () => undefined,
  };
  return index;
}

/** An `apiBusy` answering `busy`, and how often the indexer asked it. */
function countedAsks(busy: () => boolean) {
  const api = {
    asks: 0,
    busy: () => {
      api.asks++;
      return busy();
    },
  };
  return api;
}

describe('the search indexer extracts the text of new PDFs and indexes it (indexNewTexts)', function () {
  this.timeout(60_000);
  let database: { knex: Knex; close(): Promise<void> };
  let db: Knex;

  before(async () => {
    database = await openScratchDatabase('text-indexer');
    db = database.knex;
    await migrateLatest(db);
  });
  after(() => database?.close());
  beforeEach(async () => {
    await db('document_files').del();
    await db('documents').del();
  });

  /** `count` uploaded documents whose PDF is the bytes of their name, waiting for their text. */
  async function upload(count: number) {
    const account = await createAccount(db, { email: `texts-${newId('account')}@example.com`, plan: 'business' });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(await insertDocument(db, account.id, Buffer.from(`pdf-${i}`), `pdf-${i}.pdf`));
    return ids;
  }
  const textsOf = async (ids: string[]) =>
    Object.fromEntries((await db('documents').whereIn('id', ids).select('id', 'body_text')).map((row) => [row.id, row.body_text]));

  /**
   * A first worker stores the text of every one of `ids`, then never gets its index writes through: it is
   * gone (kill -9), and takes no more PDFs.
   */
  async function storeThenDie(ids: string[]) {
    const hanging: SearchBackend = { ...fakeIndex(0), index: () => new Promise<void>(() => {}) };
    let alive = true;
    void indexNewTexts(db, hanging, fakeExtractor(2, 0), { keepGoing: () => alive });
    for (let waited = 0; Object.values(await textsOf(ids)).includes(null); waited += 10) {
      if (waited > 20_000) throw new Error('the first worker did not store the texts');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    alive = false;
  }

  it('extracts each waiting PDF once, keeping every process busy with the next one read, and indexes every one in fewer writes, some at once', async () => {
    const ids = await upload(40);
    const extractor = fakeExtractor(3, 20);
    const index = fakeIndex(150); // slower than extraction: the writes grow instead of holding it up
    expect(await indexNewTexts(db, index, extractor, { keepGoing: () => true })).to.equal(40);

    expect(extractor.extracted).to.have.length(40);
    expect(extractor.mostAtOnce).to.equal(3);
    // One extracting and one waiting for each process, never more (fewer when the database reads lag).
    expect(extractor.mostHeld).to.be.within(3, 6);
    expect(index.writes.flat()).to.have.members(ids);
    expect(index.writes.length).to.be.below(40);
    expect(index.mostAtOnce).to.be.at.least(2); // the texts stored during a write go out without waiting for it
    const texts = await textsOf(ids);
    expect(ids.map((id) => texts[id])).to.deep.equal(ids.map((_, i) => `the text of pdf-${i}`));
    expect(await indexNewTexts(db, index, extractor, { keepGoing: () => true })).to.equal(0);
  });

  it('takes up documents uploaded while it writes the index, without waiting for the next call', async () => {
    const first = await upload(4);
    let later: Promise<string[]> | undefined;
    const index = fakeIndex(300);
    // An index whose writes take 300 ms, as an Elasticsearch write waits for its refresh; 4 more PDFs are
    // uploaded as the first begins.
    const uploadingDuringWrite: SearchBackend = {
      ...index,
      async index(refs) {
        await (later ??= upload(4));
        return index.index(refs);
      },
    };
    const extractor = fakeExtractor(2, 5);
    expect(await indexNewTexts(db, uploadingDuringWrite, extractor, { keepGoing: () => true })).to.equal(8);
    expect(index.writes.flat()).to.have.members([...first, ...(await later!)]);
    expect(extractor.extracted).to.have.length(8);
  });

  it('when the index refuses a write, fails and keeps every text not indexed, and the next call indexes them without extracting them again', async () => {
    const ids = await upload(12);
    const extractor = fakeExtractor(2, 10);
    const index = fakeIndex(30, (write) => write === 2);
    let failure: unknown;
    await indexNewTexts(db, index, extractor, { keepGoing: () => true }).catch((error) => (failure = error));
    expect(String(failure)).to.contain('index unavailable');
    const indexed = index.writes.flat();
    const extracted = extractor.extracted.length;
    const texts = await textsOf(ids);
    const stored = ids.filter((id) => texts[id] !== null);
    expect(stored).to.include.members(indexed);

    expect(await indexNewTexts(db, index, extractor, { keepGoing: () => true })).to.equal(ids.length - indexed.length);
    expect(index.writes.flat()).to.have.members(ids);
    expect(Object.values(await textsOf(ids))).to.not.include(null);
    expect(extractor.extracted).to.have.length(extracted + ids.length - stored.length);
  });

  it('when the database refuses to store a text, fails, indexes what it stored, and the next call extracts that text again', async () => {
    const ids = await upload(8);
    const refused = ids[3];
    // The store of one text fails once, as a lost connection or a full disk would make it fail (a
    // sequence counts the tries: unlike a row, it is not rolled back with the refused update).
    await db.raw(`create table refuse_once (document_id text primary key)`);
    await db('refuse_once').insert({ document_id: refused });
    await db.raw('create sequence refuse_once_tries');
    await db.raw(`create function refuse_text_once() returns trigger language plpgsql as $$
      begin
        if exists (select from refuse_once where document_id = new.id) and nextval('refuse_once_tries') = 1 then
          raise exception 'disk full';
        end if;
        return new;
      end $$`);
    await db.raw('create trigger refuse_text_once before update of body_text on documents for each row execute function refuse_text_once()');
    try {
      const extractor = fakeExtractor(2, 5);
      const index = fakeIndex(0);
      let failure: unknown;
      await indexNewTexts(db, index, extractor, { keepGoing: () => true }).catch((error) => (failure = error));
      expect(String(failure)).to.contain('disk full');
      expect((await textsOf([refused]))[refused]).to.equal(null);
      // Every text it stored is indexed, the refused one is not.
      const texts = await textsOf(ids);
      const indexed = index.writes.flat();
      expect(indexed).to.have.members(ids.filter((id) => texts[id] !== null));
      expect(indexed).to.not.include(refused);

      expect(await indexNewTexts(db, index, extractor, { keepGoing: () => true })).to.equal(ids.length - indexed.length);
      expect(Object.values(await textsOf(ids))).to.not.include(null);
      expect(index.writes.flat()).to.have.members(ids);
      expect(extractor.extracted.filter((text) => text === 'the text of pdf-3')).to.have.length(2);
    } finally {
      await db.raw('drop trigger refuse_text_once on documents');
      await db.raw('drop function refuse_text_once()');
      await db.raw('drop table refuse_once');
      await db.raw('drop sequence refuse_once_tries');
    }
  });

  it('writes at most 100 texts at a time to the index, and has at most 200 in writes at once', async () => {
    const ids = await upload(250);
    await storeThenDie(ids); // the next call finds 250 texts waiting at once

    const index = fakeIndex(300); // longer than the spacing of writes: the second begins during the first
    expect(await indexNewTexts(db, index, fakeExtractor(4, 0), { keepGoing: () => true })).to.equal(250);
    expect(index.writes.flat()).to.have.members(ids);
    expect(index.writes.map((write) => write.length)).to.deep.equal([100, 100, 50]);
    expect(index.mostAtOnce).to.equal(2);
  });

  it('indexes first the texts a worker killed between storing and indexing them had stored, without extracting them again', async () => {
    const ids = await upload(6);
    await storeThenDie(ids);

    const extractor = fakeExtractor(2, 5);
    const index = fakeIndex(0);
    expect(await indexNewTexts(db, index, extractor, { keepGoing: () => true })).to.equal(6);
    expect(index.writes.flat()).to.have.members(ids);
    expect(extractor.extracted).to.deep.equal([]);
    expect(await indexNewTexts(db, index, extractor, { keepGoing: () => true })).to.equal(0);
    expect(index.writes.flat()).to.have.length(6);
  });

  it('hands a PDF over 1 MiB to the extractor as a temporary file copied in pieces, and removes the file', async () => {
    const [id] = await upload(1);
    const pdf = crypto.randomBytes(17 * 1024 * 1024 + 5); // many pieces, the last one short
    await db('document_files').where({ document_id: id }).update({ content: pdf });
    const fileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-texts-'));
    try {
      const extractor = fakeExtractor(1, 0, path.join(fileDir, 'uploads'));
      expect(await indexNewTexts(db, fakeIndex(0), extractor, { keepGoing: () => true })).to.equal(1);
      expect(await textsOf([id])).to.deep.equal({ [id]: `the file of sha256 ${sha256(pdf)}` });
      expect(fs.readdirSync(path.join(fileDir, 'uploads'))).to.deep.equal([]);
    } finally {
      fs.rmSync(fileDir, { recursive: true, force: true });
    }
  });

  it('removes the temporary file of a PDF whose extraction fails, and leaves its text to be extracted again', async () => {
    const [id] = await upload(1);
    await db('document_files')
      .where({ document_id: id })
      .update({ content: crypto.randomBytes(2 * 1024 * 1024) });
    const fileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-texts-'));
    try {
      const extractor: PdfTextExtractor = { ...fakeExtractor(1, 0, fileDir), extractText: () => Promise.reject(new Error('the pool is closed')) };
      let failure: unknown;
      await indexNewTexts(db, fakeIndex(0), extractor, { keepGoing: () => true }).catch((error) => (failure = error));
      expect(String(failure)).to.contain('the pool is closed');
      expect(fs.readdirSync(fileDir)).to.deep.equal([]);
      expect(await textsOf([id])).to.deep.equal({ [id]: null });
    } finally {
      fs.rmSync(fileDir, { recursive: true, force: true });
    }
  });

  it('gives way to a burst in the api: takes no PDF while the api is busy, then takes them all', async () => {
    const ids = await upload(4);
    const extractor = fakeExtractor(2, 0);
    let busy = true;
    const api = countedAsks(() => busy);
    const indexing = indexNewTexts(db, fakeIndex(0), extractor, { keepGoing: () => true, apiBusy: api.busy });
    // Each of its 4 loops asks before each PDF, then again after each pause: 8 asks, and some loop has held its PDF back.
    await eventually(async () => expect(api.asks).to.be.at.least(8), 10_000);
    expect(extractor.extracted, 'extracted during the burst').to.have.length(0);
    busy = false;
    expect(await indexing).to.equal(4);
    expect(Object.values(await textsOf(ids))).to.not.include(null);
  });

  it('under a burst that does not end, still takes a PDF a second in each of its loops', async () => {
    const ids = await upload(4); // one for each loop: 2 processes, 2 loops each
    const extractor = fakeExtractor(2, 0);
    const api = countedAsks(() => true);
    expect(await indexNewTexts(db, fakeIndex(0), extractor, { keepGoing: () => true, apiBusy: api.busy })).to.equal(4);
    expect(api.asks, 'asks: each loop gave way, asking again after a pause').to.be.at.least(8);
    expect(Object.values(await textsOf(ids))).to.not.include(null);
  });

  it('stops taking PDFs once told to, and indexes every text it has stored', async () => {
    const ids = await upload(20);
    const extractor = fakeExtractor(2, 10);
    const index = fakeIndex(10);
    const done = await indexNewTexts(db, index, extractor, { keepGoing: () => extractor.extracted.length < 5 });
    expect(done).to.be.within(5, 8); // the fifth, and at most the three others held by the extractor then
    const texts = await textsOf(ids);
    const stored = ids.filter((id) => texts[id] !== null);
    expect(index.writes.flat()).to.have.members(stored);
  });
});
