import { expect } from 'chai';
import type { Knex } from 'knex';
import { migrationSource } from '../../src/db/migrations';
import { mayHoldPhrase, searchPostgres, toTsquery } from '../../src/search/postgres';
import { SearchQuerySchema } from '../../src/search/schema';
import { migrationsWhere, scratchDatabaseMigratedBy } from '../support/scratchDatabase';
import { accountRow, documentRow, insertRequestRows } from '../support/factories';

const MIGRATION = '20261129235900_search_word_pairs';

// Migration 20261129235900 on a database of its own: word_pairs, the pairs of adjacent words that find a
// phrase's candidates, must hold every pair search_vector's <-> can match, or a phrase search would miss
// a row that holds it. Checked against <-> itself on texts made to reach its edges.
describe(`migration ${MIGRATION}: the pairs of words that find a phrase`, function () {
  this.timeout(180_000);
  let knex: Knex;
  scratchDatabaseMigratedBy(
    'search-word-pairs',
    migrationsWhere((name) => name < MIGRATION),
    (opened) => (knex = opened),
  );

  const found = async (q: string, type?: 'document' | 'signing_request') => {
    const query = SearchQuerySchema.parse({ q, ...(type ? { type } : {}) });
    return (await searchPostgres(knex, 'acct_1', query)).hits.map((hit) => hit.id).sort();
  };
  /** The rows whose search_vector holds the phrase by <-> alone, and those whose word_pairs hold its pairs. */
  const byVector = async (table: string, phrase: string) =>
    (
      await knex.raw(`select id from ${table} where search_vector @@ to_tsquery('simple', ?) order by id`, [
        toTsquery({ words: [], phrases: [phrase.split(' ')], prefix: null }),
      ])
    ).rows.map((row: { id: string }) => row.id);
  /** As the search asks: a phrase of which to_tsvector keeps one word or none has no pairs to hold. */
  const byPairs = async (table: string, phrase: string) => {
    const [test, bindings] = mayHoldPhrase(phrase.split(' '));
    return (await knex.raw(`select id from ${table} where ${test} order by id`, bindings)).rows.map((row: { id: string }) => row.id);
  };

  it('fills the rows made before, follows later texts, and goes down again', async () => {
    await knex('accounts').insert(accountRow());
    await knex('documents').insert([
      documentRow('doc_1', 'acct_1', 'lease.pdf', 'The tenant pays the rent'),
      documentRow('doc_2', 'acct_1', 'inventory.pdf', null),
    ]);
    await insertRequestRows(knex, { id: 'sr_1', accountId: 'acct_1', documentIds: ['doc_1', 'doc_2'] });

    await knex.migrate.latest({ migrationSource });
    expect(await found('"tenant pays"')).to.deep.equal(['doc_1', 'sr_1']);
    expect(await found('"pays tenant"')).to.deep.equal([]);
    // A phrase across a name and the text after it, as <-> reads search_vector.
    expect(await found('"lease pdf the"', 'document')).to.deep.equal(['doc_1']);

    await knex('documents').where({ id: 'doc_2' }).update({ body_text: 'Three chairs and a wardrobe' });
    await knex('documents').where({ id: 'doc_1' }).update({ file_name: 'tenancy.pdf' });
    expect(await found('"a wardrobe"')).to.deep.equal(['doc_2', 'sr_1']);
    expect(await found('"tenancy pdf"')).to.deep.equal(['doc_1', 'sr_1']);
    expect(await found('"lease pdf"')).to.deep.equal([]);
    await knex('signing_requests').where({ id: 'sr_1' }).update({ title: 'Flat nine keys' });
    expect(await found('"nine keys"')).to.deep.equal(['sr_1']);

    await knex.migrate.rollback({ migrationSource });
    const columns = await knex.raw(`select attname from pg_attribute where attname = 'word_pairs' and not attisdropped`);
    expect(columns.rows).to.deep.equal([]);
    await knex.migrate.latest({ migrationSource });
    expect(await found('"a wardrobe"')).to.deep.equal(['doc_2', 'sr_1']);
  });

  it('holds every pair <-> can match, at the edges of a tsvector', async () => {
    await knex.migrate.latest({ migrationSource });
    await knex('accounts').insert(accountRow('acct_2', 'edges@example.com')).onConflict('id').ignore();
    const words = ['ab', 'cd', 'ef', 'gh', '42', 'x1y2', 'élan', 'straße', 'кот', 'a\u0301b', '猫', '1e5'];
    let state = 7;
    const next = (n: number) => ((state = (state * 1103515245 + 12345) % 2 ** 31), state % n);
    const texts: Record<string, string> = {
      // Past 256 places of one word, which a tsvector keeps no more of.
      many: Array.from({ length: 2000 }, (_, i) => (i % 3 === 0 ? 'ab' : words[next(words.length)])).join(' '),
      // Past position 16,383, where a tsvector puts every later word.
      long: Array.from({ length: 20_000 }, () => words[next(words.length)]).join(' '),
      // Words as long as a lexeme may be (2,047 bytes), and one longer (left out of search_vector).
      wide: ['ab', 'q'.repeat(2047), 'cd', 'z'.repeat(3000), 'ef', 'q'.repeat(2047), 'ab'].join(' '),
      // 200,000 characters of four-byte letters, the most text a document keeps: its pairs must still fit.
      astral: Array.from({ length: 40_000 }, (_, i) => String.fromCodePoint(0x20000 + (i % 5000)).repeat(4)).join(' '),
      mixed: 'Kot (кот) and 猫 — élan, straße; a\u0301b 1e5 x1y2 42 42 ab-cd ef.gh',
    };
    await knex('documents').insert(Object.entries(texts).map(([name, text]) => documentRow(`doc_${name}`, 'acct_2', `${name}.pdf`, text)));
    const phrases = new Set<string>([
      '42 42',
      'ab cd',
      'cd ef',
      'ef gh',
      'élan straße',
      'кот and',
      'a\u0301b 1e5',
      `ab ${'q'.repeat(2047)}`,
      `cd ${'z'.repeat(3000)} ef`,
    ]);
    phrases.add(texts.astral.split(' ').slice(0, 2).join(' '));
    for (const text of Object.values(texts).slice(0, 3)) {
      const all = text.split(' ');
      for (let i = 0; i < 40; i++) {
        const at = next(all.length - 3);
        phrases.add(all.slice(at, at + 2 + next(2)).join(' ')); // words next to each other, two or three
        phrases.add(`${words[next(words.length)]} ${words[next(words.length)]}`); // any two
      }
    }
    let matched = 0;
    for (const phrase of phrases) {
      const vector = await byVector('documents', phrase);
      const pairs = await byPairs('documents', phrase);
      expect(pairs, `the rows holding "${phrase.slice(0, 40)}" by <-> have its pairs`).to.include.members(vector);
      matched += vector.length;
    }
    expect(matched, 'rows matched at all: the phrases reach them').to.be.above(20);
  });
});
