import { expect } from 'chai';
import { formWiringProblems, shownFields, type FieldCondition, type FormField } from '../../src/fields/conditions';
import { FieldConditionSchema } from '../../src/fields/schemas';

// Each problem of a condition as "path message", as the API's 400 would list it.
const problemsOf = (input: unknown) => {
  const result = FieldConditionSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`.trim());
};
const filled = (field: string): FieldCondition => ({ field, is: 'filled' });
const nested = (levels: number): FieldCondition => (levels === 0 ? filled('a') : { all: [nested(levels - 1)] });
const circleOf = (...keys: string[]) => `${[...keys, keys[0]].map((key) => `"${key}"`).join(' → ')}: conditions and calculations must not go round in a circle`;
const unknown = (what: string, field: string, name: string) => `the ${what} of "${field}" names "${name}", which is no field of this form`;

describe('FieldConditionSchema: the shape of a condition in a request body', () => {
  it('accepts every kind of test, and all and any groups nested three levels deep', () => {
    const good: FieldCondition[] = [
      filled('a'),
      { field: 'a', is: 'empty' },
      { field: 'a', is: 'equals', values: ['yes'] },
      { field: 'a', is: 'notEquals', values: ['no', 'maybe'] },
      { any: [{ all: [filled('a'), { field: 'b', is: 'equals', values: ['1'] }] }, filled('c')] },
      nested(3),
    ];
    for (const condition of good) expect(FieldConditionSchema.parse(condition)).to.deep.equal(condition);
  });

  it('refuses unknown fields, in tests and groups', () => {
    expect(problemsOf({ field: 'a', is: 'filled', value: 'x' })).to.deep.equal(['has unknown field(s): value']);
    expect(problemsOf({ all: [filled('a')], any: [filled('b')] })).to.deep.equal(['has unknown field(s): any']);
  });

  it('refuses empty lists, a missing or unknown kind of test, and values where they do not belong', () => {
    expect(problemsOf({ all: [] })).to.deep.equal(['all must have at least one condition']);
    expect(problemsOf({ field: 'a', is: 'equals', values: [] })).to.deep.equal(['values must have at least one value']);
    expect(problemsOf({ field: 'a', is: 'equals' })).to.deep.equal(['values is required for "equals"']);
    expect(problemsOf({ field: 'a', is: 'filled', values: ['x'] })).to.deep.equal(['values must not be given for "filled"']);
    expect(problemsOf({ field: 'a' })).to.deep.equal(['is is required']);
    expect(problemsOf({ any: [{ field: 'a', is: 'blank' }] })).to.deep.equal(['any.0.is must be one of: filled, empty, equals, notEquals']);
    expect(problemsOf('a')).to.deep.equal(['must be an object']);
  });

  it('refuses keys and values that are empty, blank, too long or not strings', () => {
    expect(problemsOf({ field: '', is: 'filled' })).to.deep.equal(['field must not be empty']);
    expect(problemsOf({ field: 'k'.repeat(101), is: 'filled' })).to.deep.equal(['field must be at most 100 characters']);
    expect(problemsOf({ field: 'a', is: 'equals', values: [' ', 'v'.repeat(201), 3] })).to.deep.equal([
      'values.0 must not be blank',
      'values.1 must be at most 200 characters',
      'values.2 must be a string',
    ]);
    expect(problemsOf({ field: 'a', is: 'equals', values: Array.from({ length: 51 }, (_, index) => `v${index}`) })).to.deep.equal([
      'values must have at most 50 values',
    ]);
  });

  it('refuses more than 20 tests in a group and nesting deeper than three levels, naming where', () => {
    expect(problemsOf({ any: Array.from({ length: 21 }, (_, index) => filled(`f${index}`)) })).to.deep.equal(['any must have at most 20 conditions']);
    expect(problemsOf(nested(4))).to.deep.equal(['all.0.all.0.all.0 must not nest all and any more than 3 levels deep']);
  });
});

describe('shownFields: each kind of test', () => {
  const form = (showWhen: FieldCondition): FormField[] => [{ key: 'answer' }, { key: 'follow-up', showWhen }];
  const shows = (showWhen: FieldCondition, answer: string | string[] | null | undefined) => shownFields(form(showWhen), { answer }).has('follow-up');

  it('filled: any value but blank, and for a checkbox "true" but not "false"', () => {
    expect(['x', ' x ', 'true', '0'].map((value) => shows(filled('answer'), value))).to.deep.equal([true, true, true, true]);
    expect(['', '   ', 'false', null, undefined].map((value) => shows(filled('answer'), value))).to.deep.equal([false, false, false, false, false]);
  });

  it('empty: the opposite of filled, an unchecked checkbox included', () => {
    const empty: FieldCondition = { field: 'answer', is: 'empty' };
    expect(['', '  ', 'false', null, undefined, []].map((value) => shows(empty, value))).to.deep.equal([true, true, true, true, true, true]);
    expect(shows(empty, 'true')).to.equal(false);
    expect(shows(empty, ['a'])).to.equal(false);
  });

  it('equals: one of the values, compared exactly after trimming, numbers as the strings given', () => {
    const equals: FieldCondition = { field: 'answer', is: 'equals', values: ['yes', ' 10 '] };
    expect(['yes', ' yes ', '10', 'Yes', '10.0', 'no', ''].map((value) => shows(equals, value))).to.deep.equal([true, true, true, false, false, false, false]);
  });

  it('notEquals: a value, and none of those listed; no value does not pass', () => {
    const notEquals: FieldCondition = { field: 'answer', is: 'notEquals', values: ['no'] };
    expect(['yes', 'no', ' no', '', undefined].map((value) => shows(notEquals, value))).to.deep.equal([true, false, false, false, false]);
  });

  it('a multi-select: equals passes when any selected value is listed, notEquals when none is', () => {
    const equals: FieldCondition = { field: 'answer', is: 'equals', values: ['red'] };
    const notEquals: FieldCondition = { field: 'answer', is: 'notEquals', values: ['red'] };
    expect(shows(equals, ['blue', 'red'])).to.equal(true);
    expect(shows(equals, ['blue'])).to.equal(false);
    expect(shows(notEquals, ['blue', 'green'])).to.equal(true);
    expect(shows(notEquals, ['blue', 'red'])).to.equal(false);
    expect(shows(notEquals, [])).to.equal(false);
    expect(shows(filled('answer'), ['', ' '])).to.equal(false);
    expect(shows(filled('answer'), ['blue'])).to.equal(true);
  });
});

describe('shownFields: groups, chains and keys', () => {
  it('all needs every test, any one of them, and they nest', () => {
    const fields: FormField[] = [
      { key: 'a' },
      { key: 'b' },
      { key: 'c' },
      { key: 'both', showWhen: { all: [filled('a'), filled('b')] } },
      { key: 'either', showWhen: { any: [filled('a'), filled('b')] } },
      { key: 'nested', showWhen: { any: [{ all: [filled('a'), { field: 'b', is: 'equals', values: ['2'] }] }, filled('c')] } },
    ];
    const shownOf = (values: Record<string, string>) => [...shownFields(fields, values)].filter((key) => key.length > 1).sort();
    expect(shownOf({ a: '1', b: '2' })).to.deep.equal(['both', 'either', 'nested']);
    expect(shownOf({ a: '1', b: '3' })).to.deep.equal(['both', 'either']);
    expect(shownOf({ b: '2' })).to.deep.equal(['either']);
    expect(shownOf({ c: 'x' })).to.deep.equal(['nested']);
    expect(shownOf({})).to.deep.equal([]);
  });

  it('hides a field whose condition names a hidden field, down a chain, whatever the hidden field holds', () => {
    const fields: FormField[] = [
      { key: 'd', showWhen: filled('c') },
      { key: 'c', showWhen: filled('b') },
      { key: 'b', showWhen: { field: 'a', is: 'equals', values: ['yes'] } },
      { key: 'a' },
      { key: 'e', showWhen: { field: 'b', is: 'empty' } },
    ];
    const values = { a: 'yes', b: 'x', c: 'x', d: 'x' };
    expect([...shownFields(fields, values)].sort()).to.deep.equal(['a', 'b', 'c', 'd']);
    expect([...shownFields(fields, { ...values, a: 'no' })].sort()).to.deep.equal(['a']);
  });

  it('treats __proto__, constructor and toString as ordinary keys, never as Object.prototype', () => {
    const fields: FormField[] = [
      { key: '__proto__' },
      { key: 'constructor' },
      { key: 'toString', showWhen: filled('__proto__') },
      { key: 'hasOwnProperty', showWhen: filled('constructor') },
    ];
    expect(formWiringProblems(fields)).to.deep.equal([]);
    expect([...shownFields(fields, {})].sort()).to.deep.equal(['__proto__', 'constructor']);
    const values = JSON.parse('{"__proto__": "yes", "constructor": "yes"}');
    expect([...shownFields(fields, values)].sort()).to.deep.equal(['__proto__', 'constructor', 'hasOwnProperty', 'toString']);
  });

  it('evaluates a chain of 2,000 fields, given last to first, without overflowing the stack', () => {
    const fields: FormField[] = Array.from({ length: 2000 }, (_, index) => ({
      key: `f${index}`,
      showWhen: index > 0 ? filled(`f${index - 1}`) : undefined,
    })).reverse();
    const values = Object.fromEntries(fields.map(({ key }) => [key, 'x']));
    expect(shownFields(fields, values).size).to.equal(2000);
    expect(shownFields(fields, { ...values, f1000: '' }).size).to.equal(1001);
  });
});

describe('formWiringProblems: what a template or request with conditions may not be', () => {
  it('finds nothing wrong in a form whose conditions and calculations name earlier or later fields', () => {
    const fields: FormField[] = [{ key: 'total', reads: ['price', 'count'] }, { key: 'price' }, { key: 'count', showWhen: filled('price') }];
    expect(formWiringProblems(fields)).to.deep.equal([]);
    expect(formWiringProblems([])).to.deep.equal([]);
  });

  it('names the unknown keys of conditions and calculations, each once', () => {
    const fields: FormField[] = [
      { key: 'A' },
      { key: 'B', showWhen: { any: [filled('Z'), { all: [filled('A'), { field: 'Z', is: 'empty' }, filled('Y')] }] } },
      { key: 'C', reads: ['A', 'X', 'X'] },
    ];
    expect(formWiringProblems(fields)).to.deep.equal([unknown('condition', 'B', 'Z'), unknown('condition', 'B', 'Y'), unknown('calculation', 'C', 'X')]);
  });

  it('names a field whose condition or calculation names itself', () => {
    expect(
      formWiringProblems([
        { key: 'A', showWhen: filled('A') },
        { key: 'B', reads: ['B'] },
      ]),
    ).to.deep.equal([
      'the condition of "A" names "A" itself: a field cannot depend on its own value',
      'the calculation of "B" names "B" itself: a field cannot depend on its own value',
    ]);
  });

  it('names duplicate keys, each once', () => {
    expect(formWiringProblems([{ key: 'A' }, { key: 'B' }, { key: 'A' }, { key: 'A' }, { key: 'B' }])).to.deep.equal([
      'the key "A" is used by more than one field',
      'the key "B" is used by more than one field',
    ]);
  });

  it('refuses a circle of two fields through conditions, and one through a condition and a calculation', () => {
    expect(
      formWiringProblems([
        { key: 'A', showWhen: filled('B') },
        { key: 'B', showWhen: filled('A') },
      ]),
    ).to.deep.equal([circleOf('A', 'B')]);
    expect(
      formWiringProblems([
        { key: 'A', reads: ['B'] },
        { key: 'B', showWhen: filled('A') },
      ]),
    ).to.deep.equal([circleOf('A', 'B')]);
  });

  it('refuses a circle of three fields mixing conditions and calculations, once, starting from the first field given', () => {
    const fields: FormField[] = [
      { key: 'x' },
      { key: 'C', showWhen: { all: [filled('x'), filled('A')] } },
      { key: 'A', reads: ['B'] },
      { key: 'B', showWhen: { any: [filled('C')] } },
    ];
    expect(formWiringProblems(fields)).to.deep.equal([circleOf('C', 'A', 'B')]);
  });

  it('reports separate circles apart, and one circle for a tangle of them, in the order of the fields', () => {
    const fields: FormField[] = [
      { key: 'P', showWhen: filled('Q') },
      { key: 'Q', reads: ['P'] },
      { key: 'A', reads: ['B', 'C'] },
      { key: 'B', showWhen: filled('A') },
      { key: 'C', showWhen: filled('A') },
    ];
    expect(formWiringProblems(fields)).to.deep.equal([circleOf('P', 'Q'), circleOf('A', 'B')]);
  });

  it('lists duplicates, then each field’s references, then circles', () => {
    const fields: FormField[] = [{ key: 'A', showWhen: filled('B') }, { key: 'B', showWhen: filled('A'), reads: ['Z'] }, { key: 'A' }];
    expect(formWiringProblems(fields)).to.deep.equal(['the key "A" is used by more than one field', unknown('calculation', 'B', 'Z'), circleOf('A', 'B')]);
  });

  it('checks a chain of 2,000 fields and a circle of 500 without overflowing the stack', () => {
    const chain: FormField[] = Array.from({ length: 2000 }, (_, index) => ({ key: `f${index}`, reads: index > 0 ? [`f${index - 1}`] : [] }));
    expect(formWiringProblems(chain)).to.deep.equal([]);
    const keys = Array.from({ length: 500 }, (_, index) => `f${index}`);
    const circle: FormField[] = keys.map((key, index) => ({ key, showWhen: filled(keys[(index + 1) % 500]) }));
    expect(formWiringProblems(circle)).to.deep.equal([circleOf(...keys)]);
    expect(shownFields(circle, Object.fromEntries(keys.map((key) => [key, 'x']))).size).to.equal(0);
  });
});
