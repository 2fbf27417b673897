// Calculated form fields: a read-only number computed from other number fields of the form, by a formula such as
// `round({Monthly rent} * 12 - {Deposit}, 2)`. A formula is parsed once, when a template or request is created (a
// syntax error becomes a 400 naming the position), and evaluated many times, on the server and in the browser: so
// pure code without Node, imports, eval or new Function. Parsing compiles the formula into closures, so that an
// evaluation costs one call per part of the formula.

/** A formula, parsed: what it refers to, and its value for given field values. */
export interface Calculation {
  source: string;
  /** The field keys it reads, each once, in order of first appearance. */
  references: string[];
  /** Its value; null when a field it reads has no value (undefined, null, '' or not a finite number) or on division by zero. Never NaN or ±Infinity. */
  evaluate(values: Readonly<Record<string, number | string | null | undefined>>): number | null;
}

/** A formula that does not parse; `position` is the 0-based index into the source where it went wrong. */
export class CalculationSyntaxError extends Error {
  readonly position: number;

  constructor(message: string, position: number) {
    super(`${message} at ${position}`);
    this.name = 'CalculationSyntaxError';
    this.position = position;
  }
}

/** The longest formula, in characters; a longer one is a syntax error at this position. */
export const MAX_CALCULATION_LENGTH = 500;
/** The deepest nesting of parentheses and function calls. */
export const MAX_CALCULATION_DEPTH = 32;

const MAX_KEY_LENGTH = 100;
const MAX_PLACES = 10;

// The compiled formula: its value given the values of the fields it reads (all present), or null.
type Evaluate = (numbers: ReadonlyMap<string, number>) => number | null;

interface Parser {
  source: string;
  at: number;
  depth: number;
  references: Set<string>;
}

// Sticky, so that each matches only where the parser stands.
const NUMBER = /\d+(?:\.\d*)?/y;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const KEY = /[^{}\p{Cc}]*/uy;
const SPACE = /\s*/y;
// A field's value given as text: a plain decimal, so that '1e3', '0x10' or '12abc' count as no value.
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

const OPERATORS: Readonly<Record<string, (a: number, b: number) => number | null>> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => (b === 0 ? null : a / b),
};

// The functions of a list of values, with how many they take at most; `round` is parsed apart, for its constant places.
const FUNCTIONS = new Map<string, { most: number; apply: (values: number[]) => number }>([
  ['floor', { most: 1, apply: ([x]) => Math.floor(x) }],
  ['ceil', { most: 1, apply: ([x]) => Math.ceil(x) }],
  ['abs', { most: 1, apply: ([x]) => Math.abs(x) }],
  ['min', { most: 20, apply: (values) => Math.min(...values) }],
  ['max', { most: 20, apply: (values) => Math.max(...values) }],
]);

/** Parses a formula; throws CalculationSyntaxError saying what was expected where ("expected a number, a field or ( at 7"). */
export function parseCalculation(source: string): Calculation {
  if (source.length > MAX_CALCULATION_LENGTH) fail(MAX_CALCULATION_LENGTH, `expected at most ${MAX_CALCULATION_LENGTH} characters`);
  const parser: Parser = { source, at: 0, depth: 0, references: new Set() };
  const root = expression(parser);
  if (peek(parser) !== '') fail(parser.at, 'expected an operator or the end of the formula');
  const references = [...parser.references];
  const evaluate = (values: Readonly<Record<string, number | string | null | undefined>>) => {
    const numbers = new Map<string, number>();
    for (const key of references) {
      // Own properties only: a key such as "constructor" must not find Object.prototype's.
      const value = numberOf(Object.hasOwn(values, key) ? values[key] : undefined);
      if (value === null) return null;
      numbers.set(key, value);
    }
    const result = root(numbers);
    return result === null ? null : tidy(result);
  };
  return { source, references, evaluate };
}

function fail(position: number, message: string): never {
  throw new CalculationSyntaxError(message, position);
}

/** The next character after any whitespace ('' at the end), without taking it. */
function peek(parser: Parser): string {
  match(parser, SPACE);
  return parser.source.charAt(parser.at);
}

function match(parser: Parser, pattern: RegExp): string | null {
  pattern.lastIndex = parser.at;
  const found = pattern.exec(parser.source);
  if (!found) return null;
  parser.at = pattern.lastIndex;
  return found[0];
}

function expect(parser: Parser, char: string, expected: string): void {
  if (peek(parser) !== char) fail(parser.at, `expected ${expected}`);
  parser.at++;
}

function enter(parser: Parser, position: number): void {
  if (++parser.depth > MAX_CALCULATION_DEPTH) fail(position, `expected at most ${MAX_CALCULATION_DEPTH} nested parentheses and calls`);
}

// The two levels of binary operators, each left-associative: 10 - 4 - 3 is (10 - 4) - 3.
const expression = (parser: Parser): Evaluate => leftAssociative(parser, ['+', '-'], term);
const term = (parser: Parser): Evaluate => leftAssociative(parser, ['*', '/'], unary);

function leftAssociative(parser: Parser, operators: string[], operand: (parser: Parser) => Evaluate): Evaluate {
  let left = operand(parser);
  for (let op = peek(parser); operators.includes(op); op = peek(parser)) {
    parser.at++;
    const apply = OPERATORS[op as keyof typeof OPERATORS];
    left = applying(([a, b]) => apply(a, b), [left, operand(parser)]);
  }
  return left;
}

// A loop rather than recursion, so that a formula of 500 minus signs costs no deep stack.
function unary(parser: Parser): Evaluate {
  let negations = 0;
  for (; peek(parser) === '-'; parser.at++) negations++;
  const operand = primary(parser);
  return negations % 2 === 0 ? operand : applying(([x]) => -x, [operand]);
}

function primary(parser: Parser): Evaluate {
  match(parser, SPACE);
  const start = parser.at;
  const char = parser.source.charAt(start);
  if (char === '(') {
    enter(parser, start);
    parser.at++;
    const inner = expression(parser);
    expect(parser, ')', 'an operator or )');
    parser.depth--;
    return inner;
  }
  if (char === '{') return field(parser);
  const number = match(parser, NUMBER);
  if (number !== null) return constant(parser, number);
  const word = match(parser, WORD);
  if (word !== null) return call(parser, word, start);
  return fail(start, 'expected a number, a field or (');
}

function constant(parser: Parser, text: string): Evaluate {
  if (text.endsWith('.')) fail(parser.at, 'expected a digit after the decimal point');
  const value = Number(text);
  if (!Number.isFinite(value)) fail(parser.at - text.length, 'expected a smaller number');
  return () => value;
}

function field(parser: Parser): Evaluate {
  const start = ++parser.at;
  const key = match(parser, KEY)!.trim();
  if (parser.source.charAt(parser.at) !== '}') fail(parser.at, 'expected }');
  parser.at++;
  if (key === '') fail(start, 'expected a field name');
  if (key.length > MAX_KEY_LENGTH) fail(start, `expected a field name of at most ${MAX_KEY_LENGTH} characters`);
  parser.references.add(key);
  return (numbers) => numbers.get(key)!;
}

function call(parser: Parser, name: string, start: number): Evaluate {
  const lower = name.toLowerCase();
  const definition = FUNCTIONS.get(lower);
  if (!definition && lower !== 'round') fail(start, `unknown function "${name}" (known: round, floor, ceil, abs, min, max; a field goes in braces)`);
  expect(parser, '(', `( after ${name}`);
  enter(parser, start);
  const compiled = definition ? listCall(parser, name, definition.most, definition.apply) : roundCall(parser);
  parser.depth--;
  return compiled;
}

function listCall(parser: Parser, name: string, most: number, apply: (values: number[]) => number): Evaluate {
  const args = [expression(parser)];
  while (args.length < most && peek(parser) === ',') {
    parser.at++;
    args.push(expression(parser));
  }
  const takes = most === 1 ? 'one argument' : `at most ${most} arguments`;
  expect(parser, ')', args.length < most ? 'an operator, a comma or )' : `an operator or ) (${name} takes ${takes})`);
  return applying(apply, args);
}

function roundCall(parser: Parser): Evaluate {
  const operand = expression(parser);
  let places = 0;
  if (peek(parser) === ',') {
    parser.at++;
    places = decimalPlaces(parser);
    expect(parser, ')', ')');
  } else expect(parser, ')', 'an operator, a comma or )');
  return applying(([x]) => roundTo(x, places), [operand]);
}

// The places of round(x, n) are a constant whole number, so that a formula cannot ask for 10^400.
function decimalPlaces(parser: Parser): number {
  match(parser, SPACE);
  const start = parser.at;
  const text = match(parser, NUMBER);
  if (text === null || text.includes('.') || Number(text) > MAX_PLACES) fail(start, `expected a whole number of decimal places from 0 to ${MAX_PLACES}`);
  return Number(text);
}

// Runs an operation on the values of its operands; null propagates, and a result that is not finite is null.
function applying(operation: (values: number[]) => number | null, operands: Evaluate[]): Evaluate {
  return (numbers) => {
    const values: number[] = [];
    for (const operand of operands) {
      const value = operand(numbers);
      if (value === null) return null;
      values.push(value);
    }
    const result = operation(values);
    return result !== null && Number.isFinite(result) ? result : null;
  };
}

function numberOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || !DECIMAL.test(value.trim())) return null;
  const number = Number(value.trim());
  return Number.isFinite(number) ? number : null;
}

/**
 * x rounded to `places` decimals, half away from zero, on its decimal digits: 1.005 is stored as 1.00499999…,
 * but written, and meant, as 1.005. The digits are read to 15 significant places, all that a double holds for
 * certain, so that float noise (3.4499999999999997 for 1.15 * 3) does not decide a half either. The point is moved
 * by editing the exponent of the digits' text rather than multiplying, which would add noise of its own or overflow.
 */
function roundTo(x: number, places: number): number {
  if (Number.isInteger(x)) return x; // every double from 2^53 up, so the shifted text stays within range
  const rounded = Math.round(shift(Math.abs(x).toPrecision(15), places));
  return Math.sign(x) * shift(String(rounded), -places);
}

/** The number `text` (a number's string form, perhaps with an exponent) times 10^places, parsed exactly. */
function shift(text: string, places: number): number {
  const [mantissa, exponent = '0'] = text.split('e');
  return Number(`${mantissa}e${Number(exponent) + places}`);
}

// The final result to 10 decimals (on 15 significant digits), which hides float noise: 0.1 + 0.2 is 0.3. And no -0.
function tidy(result: number): number {
  const rounded = roundTo(result, MAX_PLACES);
  return rounded === 0 ? 0 : rounded;
}
