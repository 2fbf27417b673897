import { expect } from 'chai';
import fc from 'fast-check';
import { TypeID } from 'typeid-js';
import { AppError } from '../../src/errors';
import { MAX_NESTING, parseInput, storableText, textProblems } from '../../src/api/validation';
import { isRefusedForGood } from '../../src/db/errors';
import { DocumentCreateSchema } from '../../src/documents/schema';
import { isId } from '../../src/domain/ids';
import { newId } from '../../src/ids';
import { loadConfig } from '../../src/config';

const detailsOf = (input: unknown) => {
  try {
    parseInput(DocumentCreateSchema, input);
  } catch (error) {
    expect(error).to.be.instanceOf(AppError);
    return (error as AppError).details;
  }
  throw new Error('expected a validation error');
};

describe('validation messages', () => {
  it('reports every violated rule, each naming its field', () => {
    expect(detailsOf({})).to.deep.equal(['fileName is required', 'fileSize must be a positive number']);
    expect(detailsOf({ fileName: 'a.pdf', fileSize: -1 })).to.deep.equal(['fileSize must be a positive number']);
    expect(detailsOf({ fileName: 'a.pdf', fileSize: 'ten' })).to.deep.equal(['fileSize must be a positive number']);
    expect(detailsOf({ fileName: 'x'.repeat(256), fileSize: 1 })).to.deep.equal(['fileName must be at most 255 characters']);
    expect(detailsOf('just a string')).to.deep.equal(['body must be an object']);
  });
});

describe('ids', () => {
  it('are prefixed, time-sortable TypeIDs', () => {
    /** The millisecond a TypeID was made: the first 48 bits of its UUIDv7. */
    const msOf = (id: string) => parseInt(TypeID.fromString(id).toUUID().replace(/-/g, '').slice(0, 12), 16);
    const before = Date.now();
    const first = newId('document');
    expect(msOf(first)).to.be.within(before, Date.now());
    let second = newId('document');
    while (msOf(second) === msOf(first)) second = newId('document'); // one made in a later millisecond
    expect(first).to.match(/^doc_[0-9a-z]{26}$/);
    expect(isId('document', first)).to.equal(true);
    expect(isId('account', first)).to.equal(false);
    expect(second > first).to.equal(true);
  });
});

describe('configuration', () => {
  it('has the embedded defaults and refuses nonsense with a clear message', () => {
    const config = loadConfig({});
    expect(config).to.include({ PORT: 3000, MAX_UPLOAD_BYTES: 25 * 1024 * 1024, runApi: true, runWorker: true });
    expect(config.dataDir).to.match(/\/data$/);
    expect(() => loadConfig({ PORT: 'eighty' })).to.throw(/PORT/);
  });
});

// Characters that break storage or rendering, mixed with any other code point: NUL, unpaired surrogates
// (either half), noncharacters, controls, and pairs that are fine.
const hostileUnit = fc.oneof(
  fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\ufffe', '\uffff', '\ufdd0', '\u{10ffff}', '\u0007', '\u202e', '😀'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const hostileText = fc.string({ unit: hostileUnit, maxLength: 12 });
const isStorable = (value: string) => value.isWellFormed() && !value.includes('\u0000');

/** A value nested `depth` levels deep (objects and arrays as `shape` says, level by level), with `leaf` at the bottom. */
function nest(depth: number, shape: boolean[], leaf: unknown): unknown {
  let value = leaf;
  for (let level = depth - 1; level >= 0; level--) value = shape[level % shape.length] ? [value] : { [`k${level}`]: value };
  return value;
}

describe('textProblems: NUL, unpaired surrogates and nesting in any input', () => {
  it('names each field whose text or field name cannot be stored, and nothing else', () => {
    fc.assert(
      fc.property(fc.dictionary(hostileText, hostileText, { maxKeys: 4 }), fc.array(hostileText, { maxLength: 3 }), (record, list) => {
        const problems = textProblems({ record, list });
        const expected = [
          ...Object.entries(record).flatMap(([key, value]) => (!isStorable(key) ? ['record'] : !isStorable(value) ? [`record.${key}`] : [])),
          ...list.flatMap((value, index) => (isStorable(value) ? [] : [`list.${index}`])),
        ];
        expect(problems.map((problem) => problem.slice(0, problem.indexOf(' must ')))).to.deep.equal(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('says which flaw: NUL, or an unpaired surrogate (in the issue: a reason "a\\ud800b", a typed signature "Me \\udfff")', () => {
    expect(textProblems({ reason: 'a\ud800b' })).to.deep.equal(['reason must be well-formed Unicode (it has an unpaired UTF-16 surrogate)']);
    expect(textProblems({ signature: { value: 'Me \udfff' } })).to.deep.equal([
      'signature.value must be well-formed Unicode (it has an unpaired UTF-16 surrogate)',
    ]);
    expect(textProblems({ name: 'a\u0000b' })).to.deep.equal(['name must not contain NUL characters']);
    expect(textProblems({ prefill: { 'ra\u0000te': 'x' } })).to.deep.equal(['prefill must not have a field name with NUL characters']);
    expect(textProblems({ ok: 'Ω 署名 😀 \ufffe' })).to.deep.equal([]);
  });

  it(`refuses nesting past ${MAX_NESTING} levels, at any depth up to 100,000 and in any shape, without exhausting the stack`, () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 64, max: 100_000 })),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
        (depth, shape) => {
          const problems = textProblems(nest(depth, shape, 'leaf'));
          expect(problems).to.deep.equal(depth > MAX_NESTING ? [`body must be nested at most ${MAX_NESTING} levels deep`] : []);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('parseInput answers a 10,000-deep body with one 400 detail, whatever the schema', () => {
    const deep = JSON.parse(`${'['.repeat(10_000)}${']'.repeat(10_000)}`);
    for (const input of [deep, { fileName: deep }, { fileName: 'a.pdf', fileSize: 1, extra: deep }]) {
      expect(detailsOf(input)).to.deep.equal([`body must be nested at most ${MAX_NESTING} levels deep`]);
    }
  });

  it('bounds the details of a body full of bad text', () => {
    const problems = textProblems(Array.from({ length: 1000 }, () => '\u0000'));
    expect(problems).to.have.length(21);
    expect(problems.at(-1)).to.equal('body has 980 more such problem(s)');
  });
});

describe('storableText: headers stored without asking (User-Agent, a forwarded address)', () => {
  it('is always storable, and leaves storable text as it is', () => {
    fc.assert(
      fc.property(hostileText, (value) => {
        const stored = storableText(value);
        expect(isStorable(stored)).to.equal(true);
        expect([...stored].length).to.equal([...value.toWellFormed()].length);
        if (isStorable(value)) expect(stored).to.equal(value);
      }),
      { numRuns: 300 },
    );
  });
});

describe('isRefusedForGood: the SQLSTATEs a retry cannot get past', () => {
  const databaseError = (code: string) => Object.assign(new Error('refused'), { code });

  it('data exceptions, integrity violations and program limits are for good; the rest may pass on a retry', () => {
    for (const code of ['22P02', '22021', '22P05', '22001', '22003', '23502', '23503', '23505', '23514', '54000'])
      expect(isRefusedForGood(databaseError(code)), code).to.equal(true);
    for (const code of ['40001', '40P01', '08006', '57P01', '53300', '42703', '42P01', 'XX000', 'ECONNRESET', 'EPIPE'])
      expect(isRefusedForGood(databaseError(code)), code).to.equal(false);
    expect(isRefusedForGood({ code: '22P02' })).to.equal(false);
    expect(isRefusedForGood(undefined)).to.equal(false);
  });
});
