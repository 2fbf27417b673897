import { expect } from 'chai';
import { decodeCursor, encodeCursor } from '../../src/search/cursor';
import { toTsquery } from '../../src/search/postgres';
import { parseInput } from '../../src/api/validation';
import { SearchQuerySchema } from '../../src/search/schema';
import { parseSearchText, searchWords } from '../../src/search/text';

describe('search text', () => {
  it('splits words on punctuation, symbols and spaces, as the SQL function does', () => {
    expect(searchWords('contract.pdf ada@example.com  Müller—naïve v2_final')).to.equal('contract pdf ada example com Müller naïve v2 final');
  });

  it('reads phrases, words, and the last word as a prefix while typed', () => {
    expect(parseSearchText('Services agr')).to.deep.equal({ phrases: [], words: ['services'], prefix: 'agr' });
    expect(parseSearchText('services agreement ')).to.deep.equal({ phrases: [], words: ['services', 'agreement'], prefix: null });
    expect(parseSearchText('"Quick Brown" fox')).to.deep.equal({ phrases: [['quick', 'brown']], words: [], prefix: 'fox' });
    expect(parseSearchText('fox "quick brown"')).to.deep.equal({ phrases: [['quick', 'brown']], words: ['fox'], prefix: null });
  });

  it('treats engine syntax as plain text', () => {
    expect(parseSearchText('{"match_all":{}}')).to.deep.equal({ phrases: [['match', 'all']], words: [], prefix: null });
    expect(parseSearchText('a & !b | c:*')).to.deep.equal({ phrases: [], words: ['a', 'b'], prefix: 'c' });
    expect(toTsquery(parseSearchText("o'brien & !x"))).to.equal("'o' & 'brien' & 'x':*");
    // where the prefix is kept to names, titles, signers and messages, the text still has the whole word
    expect(toTsquery(parseSearchText('"a b" contr'), 'ABC')).to.equal("('a' <-> 'b') & ('contr':*ABC | 'contr')");
  });
});

describe('search cursors', () => {
  it('round-trip, and anything else is not a cursor', () => {
    const cursor = { sort: 'relevance' as const, value: 0.0607927, id: 'doc_01jd8x3c6hf1z8k3q2v5n7m9pt', createdAt: 1795958800539 };
    expect(decodeCursor(encodeCursor(cursor))).to.deep.equal(cursor);
    const byDate = { sort: '-createdAt' as const, value: 1795958800539, id: 'doc_01jd8x3c6hf1z8k3q2v5n7m9pt' };
    expect(decodeCursor(encodeCursor(byDate))).to.deep.equal(byDate);
    for (const text of [
      '',
      // by relevance without the creation time (the tie-breaker before the id), as cursors were before it
      Buffer.from('["relevance",0.06,"doc_01jd8x3c6hf1z8k3q2v5n7m9pt"]').toString('base64url'),
      Buffer.from('["relevance",0.06,"doc_01jd8x3c6hf1z8k3q2v5n7m9pt","x"]').toString('base64url'),
      Buffer.from('["-createdAt",1,"doc_01jd8x3c6hf1z8k3q2v5n7m9pt",1]').toString('base64url'),
      'garbage',
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from('["relevance","x","doc_01jd8x3c6hf1z8k3q2v5n7m9pt"]').toString('base64url'),
      Buffer.from('["size",1,"doc_01jd8x3c6hf1z8k3q2v5n7m9pt"]').toString('base64url'),
    ]) {
      expect(decodeCursor(text), text).to.equal(null);
    }
  });

  it('a query defaults to relevance with q and to newest first without', () => {
    expect(parseInput(SearchQuerySchema, { q: 'lease' }).sort).to.equal('relevance');
    expect(parseInput(SearchQuerySchema, {}).sort).to.equal('-createdAt');
  });
});
