import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { CalculationSyntaxError, MAX_CALCULATION_DEPTH, MAX_CALCULATION_LENGTH, parseCalculation } from '../../src/fields/calculation';

// Calculated fields: a formula over other number fields, parsed once (a syntax error names its position) and
// evaluated many times, on the server and in the browser.

type Values = Record<string, number | string | null | undefined>;

const valueOf = (source: string, values: Values = {}) => parseCalculation(source).evaluate(values);

/** The syntax error a formula throws. */
function errorOf(source: string): CalculationSyntaxError {
  try {
    parseCalculation(source);
  } catch (error) {
    expect(error).to.be.instanceOf(CalculationSyntaxError);
    return error as CalculationSyntaxError;
  }
  throw new Error(`expected "${source}" not to parse`);
}

describe('calculated fields (src/fields/calculation.ts)', () => {
  describe('arithmetic', () => {
    it('subtracts, divides and multiplies from left to right', () => {
      expect(valueOf('10 - 4 - 3')).to.equal(3);
      expect(valueOf('8 / 4 / 2')).to.equal(1);
      expect(valueOf('2 * 3 * 4')).to.equal(24);
      expect(valueOf('12 / 3 * 2')).to.equal(8);
    });

    it('multiplies and divides before it adds and subtracts', () => {
      expect(valueOf('2 * 3 + 4')).to.equal(10);
      expect(valueOf('4 + 2 * 3')).to.equal(10);
      expect(valueOf('10 - 6 / 2')).to.equal(7);
      expect(valueOf('(2 + 3) * 4')).to.equal(20);
    });

    it('negates with a leading minus, as often as it is written', () => {
      expect(valueOf('-2 * -3')).to.equal(6);
      expect(valueOf('2 - -3')).to.equal(5);
      expect(valueOf('-(2 + 3)')).to.equal(-5);
      expect(valueOf('- - 4')).to.equal(4);
      expect(valueOf('-{a}', { a: 7 })).to.equal(-7);
    });

    it('reads whole numbers and decimals, with whitespace anywhere between tokens', () => {
      expect(valueOf('12')).to.equal(12);
      expect(valueOf('0.5')).to.equal(0.5);
      expect(valueOf(' \t1 +\n 2 ')).to.equal(3);
      expect(valueOf('007.50')).to.equal(7.5);
    });

    it('hides float noise in the result', () => {
      expect(valueOf('0.1 + 0.2')).to.equal(0.3);
      expect(valueOf('{a} + {b}', { a: '0.1', b: '0.2' })).to.equal(0.3);
      expect(valueOf('1.1 * 1.1')).to.equal(1.21);
      expect(valueOf('1234567.1 + 0.2')).to.equal(1234567.3);
      expect(valueOf('0.3 - 0.1')).to.equal(0.2);
    });

    it('keeps large numbers and their decimals whole', () => {
      expect(valueOf('123456789012.34 + 0')).to.equal(123456789012.34);
      expect(valueOf('100000000000000000000 * 1000')).to.equal(1e23);
      expect(valueOf('{a} * 2', { a: 1e300 })).to.equal(2e300);
    });

    it('never gives -0', () => {
      expect(Object.is(valueOf('-0'), 0)).to.equal(true);
      expect(Object.is(valueOf('ceil(-0.5)'), 0)).to.equal(true);
      expect(Object.is(valueOf('round(-0.4)'), 0)).to.equal(true);
    });
  });

  describe('functions', () => {
    it('rounds half away from zero, to a whole number or to 0 to 10 places', () => {
      expect(valueOf('round(2.5)')).to.equal(3);
      expect(valueOf('round(-2.5)')).to.equal(-3);
      expect(valueOf('round(2.4999)')).to.equal(2);
      expect(valueOf('round(7)')).to.equal(7);
      expect(valueOf('round(1.25, 1)')).to.equal(1.3);
      expect(valueOf('round(-1.25, 1)')).to.equal(-1.3);
      expect(valueOf('round(3.14159, 0)')).to.equal(3);
      expect(valueOf('round(1 / 3, 10)')).to.equal(0.3333333333);
      expect(valueOf('round(0.000000123456, 8)')).to.equal(0.00000012);
    });

    it('rounds on the decimal digits, not on the binary value nearest them', () => {
      expect(valueOf('round(1.005, 2)')).to.equal(1.01);
      expect(valueOf('round(2.675, 2)')).to.equal(2.68);
      expect(valueOf('round(-1.005, 2)')).to.equal(-1.01);
      expect(valueOf('round(1.45, 1)')).to.equal(1.5);
      expect(valueOf('round(123456789.125, 2)')).to.equal(123456789.13);
      // 1.15 * 3 is 3.4499999999999997 in binary: float noise must not decide the half.
      expect(valueOf('round({price} * {quantity}, 1)', { price: '1.15', quantity: 3 })).to.equal(3.5);
    });

    it('leaves large whole numbers to round alone', () => {
      expect(valueOf('round({a}, 2)', { a: 1e300 })).to.equal(1e300);
      expect(valueOf('round({a}, 10)', { a: 2 ** 60 })).to.equal(2 ** 60);
    });

    it('takes floor, ceiling and absolute value', () => {
      expect(valueOf('floor(2.7)')).to.equal(2);
      expect(valueOf('floor(-2.2)')).to.equal(-3);
      expect(valueOf('ceil(2.2)')).to.equal(3);
      expect(valueOf('ceil(-2.7)')).to.equal(-2);
      expect(valueOf('abs(-4.5)')).to.equal(4.5);
      expect(valueOf('abs(4.5)')).to.equal(4.5);
    });

    it('takes the least and the greatest of 1 to 20 values', () => {
      expect(valueOf('min(3, 1, 2)')).to.equal(1);
      expect(valueOf('max(3, 1, 2)')).to.equal(3);
      expect(valueOf('min(-5)')).to.equal(-5);
      expect(valueOf('max({a} - 10, 0)', { a: 4 })).to.equal(0);
      const twenty = Array.from({ length: 20 }, (_, i) => String(i + 1)).join(', ');
      expect(valueOf(`max(${twenty})`)).to.equal(20);
      expect(valueOf(`min(${twenty})`)).to.equal(1);
    });

    it('knows function names in any case, and nests calls', () => {
      expect(valueOf('ROUND(2.5)')).to.equal(3);
      expect(valueOf('Max(1, 2)')).to.equal(2);
      expect(valueOf('round(max(abs(-2.345), floor(1.9)), 2) * 2')).to.equal(4.7);
    });
  });

  describe('field values', () => {
    it('lists the fields it reads once each, in order of first appearance, with their names trimmed', () => {
      expect(parseCalculation('{b} + {a} * {b} - { c } / {a}').references).to.deep.equal(['b', 'a', 'c']);
      expect(parseCalculation('{ Monthly rent } * 12 + {rent_2}').references).to.deep.equal(['Monthly rent', 'rent_2']);
      expect(parseCalculation('1 + 2').references).to.deep.equal([]);
      expect(parseCalculation(' 1 + 2 ').source).to.equal(' 1 + 2 ');
    });

    it('takes field names of any characters but braces and control characters', () => {
      expect(valueOf('{Price (€), incl. VAT} * 2', { 'Price (€), incl. VAT': 5 })).to.equal(10);
      expect(valueOf(`{${'k'.repeat(100)}}`, { ['k'.repeat(100)]: 1 })).to.equal(1);
    });

    it('reads numbers, and text that is a plain decimal number', () => {
      expect(valueOf('{a} + {b}', { a: 2, b: '3' })).to.equal(5);
      expect(valueOf('{a}', { a: ' 12.5 ' })).to.equal(12.5);
      expect(valueOf('{a}', { a: '-3' })).to.equal(-3);
      expect(valueOf('{a}', { a: '0.25' })).to.equal(0.25);
    });

    it('is null when a field it reads has no value', () => {
      for (const value of [undefined, null, '', '   ']) expect(valueOf('{a} + 1', { a: value }), String(value)).to.equal(null);
      expect(valueOf('{a} + {b}', { a: 1 })).to.equal(null);
      expect(valueOf('{a} * 0', {})).to.equal(null);
    });

    it('is null when a field holds something other than a plain finite number', () => {
      for (const value of ['1e3', '0x10', '12abc', 'abc', '1,000', '+5', '.5', '1.', 'Infinity', 'NaN', '1 2', '9'.repeat(400)]) {
        expect(valueOf('{a}', { a: value }), value).to.equal(null);
      }
      for (const value of [NaN, Infinity, -Infinity]) expect(valueOf('{a}', { a: value }), String(value)).to.equal(null);
      expect(valueOf('{a}', { a: true } as unknown as Values)).to.equal(null);
      expect(valueOf('{a}', { a: [1] } as unknown as Values)).to.equal(null);
    });

    it('is null on division by zero', () => {
      expect(valueOf('1 / 0')).to.equal(null);
      expect(valueOf('0 / 0')).to.equal(null);
      expect(valueOf('{a} / ({b} - {b})', { a: 1, b: 2 })).to.equal(null);
      expect(valueOf('1 + min(2, 3 / 0)')).to.equal(null);
      expect(valueOf('1 / -0')).to.equal(null);
    });

    it('is null when a step overflows, never Infinity or NaN', () => {
      expect(valueOf('{a} * {a}', { a: 1e200 })).to.equal(null);
      expect(valueOf('{a} * {a} - {a} * {a}', { a: 1e200 })).to.equal(null);
      expect(valueOf('-{a} * 10', { a: 1e308 })).to.equal(null);
    });

    it('treats constructor, __proto__ and toString as ordinary keys, reading only own properties', () => {
      for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
        const calculation = parseCalculation(`{${key}} + 1`);
        expect(calculation.references).to.deep.equal([key]);
        expect(calculation.evaluate({}), key).to.equal(null);
        expect(calculation.evaluate(JSON.parse(`{"${key}": 2}`)), key).to.equal(3);
      }
      expect(valueOf('{a}', Object.create({ a: 1 }))).to.equal(null);
      expect(valueOf('{a}', Object.assign(Object.create(null), { a: 4 }))).to.equal(4);
    });

    it('evaluates many times with different values', () => {
      const calculation = parseCalculation('{rent} * 12 - {deposit}');
      expect(calculation.evaluate({ rent: 1000, deposit: 500 })).to.equal(11500);
      expect(calculation.evaluate({ rent: '950.50', deposit: 0 })).to.equal(11406);
      expect(calculation.evaluate({ rent: 1000 })).to.equal(null);
    });
  });

  describe('syntax errors', () => {
    const cases: [string, string, number, string][] = [
      ['an empty formula', '', 0, 'expected a number, a field or ('],
      ['a blank formula', '   ', 3, 'expected a number, a field or ('],
      ['an unclosed parenthesis', '(1 + 2', 6, 'expected an operator or )'],
      ['an unopened parenthesis', '1 + 2)', 5, 'expected an operator or the end of the formula'],
      ['empty parentheses', '()', 1, 'expected a number, a field or ('],
      ['a trailing operator', '1 +', 3, 'expected a number, a field or ('],
      ['two operators in a row', '1 + * 2', 4, 'expected a number, a field or ('],
      ['a unary plus', '+1', 0, 'expected a number, a field or ('],
      ['two numbers in a row', '1 2', 2, 'expected an operator or the end of the formula'],
      ['two fields in a row', '{a} {b}', 4, 'expected an operator or the end of the formula'],
      ['a number without a whole part', '.5', 0, 'expected a number, a field or ('],
      ['a number without a fraction after its point', '1. + 2', 2, 'expected a digit after the decimal point'],
      ['a number with an exponent', '1e3', 1, 'expected an operator or the end of the formula'],
      ['a thousands separator', '1,000', 1, 'expected an operator or the end of the formula'],
      ['a number too large to hold', `${'9'.repeat(400)}`, 0, 'expected a smaller number'],
      ['an unknown function', '2 * sqrt(4)', 4, 'unknown function "sqrt" (known: round, floor, ceil, abs, min, max; a field goes in braces)'],
      ['a field name without braces', 'rent * 12', 0, 'unknown function "rent" (known: round, floor, ceil, abs, min, max; a field goes in braces)'],
      ['a function without parentheses', 'round 2', 6, 'expected ( after round'],
      ['a function without arguments', 'max()', 4, 'expected a number, a field or ('],
      ['a second argument to floor', 'floor(1, 2)', 7, 'expected an operator or ) (floor takes one argument)'],
      ['an unclosed call', 'min(1, 2', 8, 'expected an operator, a comma or )'],
      ['a third argument to round', 'round(1, 2, 3)', 10, 'expected )'],
      ['a fraction of decimal places', 'round({x}, 1.5)', 11, 'expected a whole number of decimal places from 0 to 10'],
      ['more than 10 decimal places', 'round({x}, 11)', 11, 'expected a whole number of decimal places from 0 to 10'],
      ['negative decimal places', 'round({x}, -1)', 11, 'expected a whole number of decimal places from 0 to 10'],
      ['decimal places from a field', 'round({x}, {n})', 11, 'expected a whole number of decimal places from 0 to 10'],
      ['an empty field name', '1 + {}', 5, 'expected a field name'],
      ['a blank field name', '{   }', 1, 'expected a field name'],
      ['an unclosed field', '{rent + 1', 9, 'expected }'],
      ['a brace inside a field name', '{a{b}}', 2, 'expected }'],
      ['a control character in a field name', '{a\u0007b}', 2, 'expected }'],
      ['a field name over 100 characters', `{${'k'.repeat(101)}}`, 1, 'expected a field name of at most 100 characters'],
    ];
    for (const [what, source, position, message] of cases) {
      it(`refuses ${what}, naming the position`, () => {
        const error = errorOf(source);
        expect(error.position).to.equal(position);
        expect(error.message).to.equal(`${message} at ${position}`);
      });
    }

    it('refuses more than 20 arguments to min and max', () => {
      const args = Array.from({ length: 21 }, () => '1').join(',');
      const error = errorOf(`max(${args})`);
      expect(error.position).to.equal(4 + 20 * 2 - 1);
      expect(error.message).to.equal('expected an operator or ) (max takes at most 20 arguments) at 43');
    });

    it(`refuses a formula over ${MAX_CALCULATION_LENGTH} characters at position ${MAX_CALCULATION_LENGTH}, and takes one of exactly that length`, () => {
      const longest = '1+'.repeat(249) + '11';
      expect(longest).to.have.length(MAX_CALCULATION_LENGTH);
      expect(valueOf(longest)).to.equal(260);
      const error = errorOf(`${longest} `);
      expect(error.position).to.equal(MAX_CALCULATION_LENGTH);
      expect(error.message).to.equal(`expected at most ${MAX_CALCULATION_LENGTH} characters at ${MAX_CALCULATION_LENGTH}`);
    });

    it(`refuses parentheses nested more than ${MAX_CALCULATION_DEPTH} deep, at the first one too deep`, () => {
      const nested = (depth: number) => '('.repeat(depth) + '1' + ')'.repeat(depth);
      expect(valueOf(nested(MAX_CALCULATION_DEPTH))).to.equal(1);
      const error = errorOf(nested(MAX_CALCULATION_DEPTH + 1));
      expect(error.position).to.equal(MAX_CALCULATION_DEPTH);
      expect(error.message).to.equal(`expected at most ${MAX_CALCULATION_DEPTH} nested parentheses and calls at ${MAX_CALCULATION_DEPTH}`);
    });

    it('counts function calls towards the nesting, together with parentheses', () => {
      const nested = (depth: number) => 'abs('.repeat(depth - 1) + '(1' + ')'.repeat(depth);
      expect(valueOf(nested(MAX_CALCULATION_DEPTH))).to.equal(1);
      expect(errorOf(nested(MAX_CALCULATION_DEPTH + 1)).position).to.equal(4 * MAX_CALCULATION_DEPTH);
      expect(errorOf('abs('.repeat(MAX_CALCULATION_DEPTH + 1) + '1' + ')'.repeat(MAX_CALCULATION_DEPTH + 1)).position).to.equal(4 * MAX_CALCULATION_DEPTH);
    });

    it('is a CalculationSyntaxError, an Error with its own name', () => {
      const error = errorOf('1 +');
      expect(error).to.be.instanceOf(Error);
      expect(error.name).to.equal('CalculationSyntaxError');
    });
  });

  describe('hostile formulas at the length limit', () => {
    it('parses and evaluates one nested as deep as allowed, with minus signs at every level', () => {
      const source = 'round(-'.repeat(MAX_CALCULATION_DEPTH) + '{a}' + ', 2)'.repeat(MAX_CALCULATION_DEPTH);
      expect(source.length).to.be.at.most(MAX_CALCULATION_LENGTH);
      const calculation = parseCalculation(source);
      for (let i = 0; i < 1000; i++) expect(calculation.evaluate({ a: 1.234 })).to.equal(1.23);
    });

    it('parses and evaluates a long flat one', () => {
      const source = '{a}*'.repeat(124) + '{b}';
      expect(source.length).to.be.at.most(MAX_CALCULATION_LENGTH);
      const calculation = parseCalculation(source);
      expect(calculation.references).to.deep.equal(['a', 'b']);
      for (let i = 0; i < 1000; i++) expect(calculation.evaluate({ a: 1, b: 2 })).to.equal(2);
    });

    it('parses and evaluates a run of minus signs', () => {
      expect(valueOf('-'.repeat(MAX_CALCULATION_LENGTH - 1) + '1')).to.equal(-1);
      expect(valueOf('1' + '-1'.repeat((MAX_CALCULATION_LENGTH - 1) / 2))).to.equal(-248);
    });

    it('reads a huge field value once, and as no value', () => {
      expect(valueOf('{a} + {a}', { a: '1'.repeat(1_000_000) })).to.equal(null);
      expect(valueOf('{a} + {a}', { a: ' '.repeat(1_000_000) + 'x' })).to.equal(null);
    });
  });

  it('imports nothing and compiles no code from text, so that a browser bundle can hold it', () => {
    const text = fs.readFileSync(path.resolve(__dirname, '../../src/fields/calculation.ts'), 'utf8');
    expect(text).not.to.match(/^\s*import\b|\brequire\(|\beval\(|\bFunction\(|\bBuffer\b/m);
  });
});
