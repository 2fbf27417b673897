import { expect } from 'chai';
import fc from 'fast-check';
import { fillForm, formProblems, type FormFieldDefinition } from '../../src/fields/form';

const signer = { name: 'Ada Lovelace', email: 'ada@example.com' };
const number = (key: string, extra: Partial<FormFieldDefinition> = {}): FormFieldDefinition => ({ key, type: 'number', ...extra });
const problemsOf = (fields: FormFieldDefinition[]) => formProblems(fields).map(({ field, problem }) => (field ? `${field} ${problem}` : problem));

// A lease: rent and deposit, a yearly total computed from them, and a pet's name asked only when the tenant has one.
const lease: FormFieldDefinition[] = [
  number('rent', { rules: { min: 0, decimals: 2 } }),
  number('deposit', { rules: { required: false, min: 0 } }),
  { key: 'yearly', type: 'calculated', formula: 'round({rent} * 12 - {deposit}, 2)' },
  { key: 'pets', type: 'radio', options: ['yes', 'no'] },
  { key: 'pet', type: 'text', showWhen: { field: 'pets', is: 'equals', values: ['yes'] } },
  { key: 'big', type: 'checkboxGroup', options: ['a', 'b'], rules: { required: false }, showWhen: { field: 'yearly', is: 'equals', values: ['11000'] } },
  { key: 'name', type: 'signerName' },
  { key: 'mail', type: 'signerEmail' },
];

describe('formProblems: a form checked as it is created', () => {
  it('passes a form whose rules, options, formulas and conditions fit', () => {
    expect(problemsOf(lease)).to.deep.equal([]);
  });

  it('names each field whose rules, options or formula do not fit its type', () => {
    expect(
      problemsOf([
        { key: 'a', type: 'text', rules: { min: 1 } },
        { key: 'b', type: 'dropdown' },
        { key: 'c', type: 'signerName', options: ['x'] },
        { key: 'd', type: 'calculated' },
        { key: 'e', type: 'calculated', formula: '{a} +' },
        { key: 'f', type: 'number', formula: '1' },
        { key: 'g', type: 'calculated', formula: '{a} * 2' },
      ]),
    ).to.deep.equal([
      'a min does not apply to a text field',
      'b options are required for a dropdown field',
      'c options do not apply to a signerName field',
      'd formula is required: it is calculated',
      'e formula does not parse: expected a number, a field or ( at 5',
      'f formula does not apply to a number field',
      'g has a formula that reads "a", a text field: a formula reads number fields',
    ]);
  });

  it('refuses formulas and conditions that name unknown fields or go round in a circle', () => {
    expect(
      problemsOf([
        { key: 'a', type: 'calculated', formula: '{b} + {zz}' },
        { key: 'b', type: 'number', showWhen: { field: 'a', is: 'filled' } },
      ]),
    ).to.deep.equal([
      'the calculation of "a" names "zz", which is no field of this form',
      '"a" → "b" → "a": conditions and calculations must not go round in a circle',
    ]);
  });
});

describe('fillForm: a submission answered', () => {
  it('checks shown fields, computes the calculated one, and fills in the signer', () => {
    const filled = fillForm(lease, { rent: '1000.50', deposit: 500, pets: 'no', pet: 'Rex' }, signer);
    expect(filled.problems).to.deep.equal([]);
    expect(filled.values).to.deep.equal({ rent: '1000.5', deposit: '500', yearly: '11506', pets: 'no', name: 'Ada Lovelace', mail: 'ada@example.com' });
    // "pet" is hidden (no pet): its value is dropped; "big" is hidden (the total is not 11000).
    expect(filled.hidden).to.deep.equal(['pet', 'big']);
  });

  it('shows a field when another answer, or a computed value, makes its condition hold', () => {
    const filled = fillForm(lease, { rent: '1000', deposit: '1000', pets: 'yes', pet: ' Rex ', big: ['b'] }, signer);
    expect(filled.problems).to.deep.equal([]);
    expect(filled.values).to.include({ yearly: '11000', pet: 'Rex', big: '["b"]' });
    expect(filled.hidden).to.deep.equal([]);
  });

  it('requires a shown field, not a hidden one', () => {
    expect(fillForm(lease, { rent: '10', pets: 'yes' }, signer).problems).to.deep.equal([{ field: 'pet', problem: 'is required' }]);
    expect(fillForm(lease, { rent: '10', pets: 'no' }, signer).problems).to.deep.equal([]);
  });

  it('refuses values the server decides, values that break their rules, and keys of no field', () => {
    const filled = fillForm(lease, { rent: '-1', pets: 'maybe', yearly: '1', name: 'Eve', nope: 'x' }, signer);
    expect(filled.problems).to.deep.equal([
      { field: 'nope', problem: 'is no field of this form' },
      { field: 'rent', problem: 'must be at least 0' },
      { field: 'yearly', problem: 'must not be given: it is calculated' },
      { field: 'pets', problem: 'must be one of: yes, no' },
      { field: 'name', problem: 'must not be given: it shows your name' },
    ]);
    expect(filled.values.name).to.equal('Ada Lovelace');
    expect(filled.values).not.to.have.property('yearly'); // rent is invalid, so there is nothing to compute from
  });

  it('settles a chain of conditions and formulas in any order of the fields', () => {
    const chain: FormFieldDefinition[] = [
      { key: 'd', type: 'calculated', formula: '{c} + 1', showWhen: { field: 'c', is: 'equals', values: ['2'] } },
      { key: 'c', type: 'calculated', formula: '{b} + 1' },
      { key: 'b', type: 'number', showWhen: { field: 'a', is: 'equals', values: ['x'] } },
      { key: 'a', type: 'dropdown', options: ['x', 'y'] },
    ];
    expect(problemsOf(chain)).to.deep.equal([]);
    expect(fillForm(chain, { a: 'x', b: '1' }, signer)).to.deep.equal({ values: { d: '3', c: '2', b: '1', a: 'x' }, hidden: [], problems: [] });
    expect(fillForm(chain, { a: 'y', b: '1' }, signer)).to.deep.equal({ values: { a: 'y' }, hidden: ['d', 'b'], problems: [] });
  });

  it('never throws, and keeps only shown fields’ values, for any values given (generated)', () => {
    const anyValue = fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.double(), fc.boolean(), fc.constant(null));
    const keys = lease.map((field) => field.key).concat(['nope', 'constructor', '__proto__']);
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...keys), anyValue), (given) => {
        const filled = fillForm(lease, given, signer);
        for (const key of Object.keys(filled.values)) expect(filled.hidden).not.to.include(key);
        for (const { field } of filled.problems) expect(filled.hidden).not.to.include(field);
      }),
      { numRuns: 300 },
    );
  });
});
