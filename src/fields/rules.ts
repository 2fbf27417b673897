// Field rules: what a sender may require of a form field's value (length, pattern, range, how many chosen), which
// rules fit which field type, and checkValue, which checks and normalizes one value. One definition for the server
// and the browser, so pure code without Node; their request schema is in schemas.ts.
// Each package runs in the browser too: re2js matches senders' patterns in linear time (a backtracking RegExp could
// hang on them); libphonenumber-js (its small `min` metadata) reads phone numbers.
import { parsePhoneNumberFromString } from 'libphonenumber-js/min';
import { RE2JS } from 're2js';
import { optionFieldTypes, type ruledFieldTypes, uploadFieldTypes } from './types';

/** The rules a field may carry, as the sender gives them (all optional). */
export interface FieldRules {
  required?: boolean; // default true
  minLength?: number; // characters (Unicode code points), for text-like types
  maxLength?: number;
  pattern?: string; // a regular expression the WHOLE value must match (RE2 syntax; linear time)
  patternMessage?: string; // shown instead of the default when the pattern fails
  min?: number; // number fields
  max?: number;
  step?: number;
  decimals?: number;
  minSelected?: number; // checkbox groups and multi-selects
  maxSelected?: number;
}
export type RuledFieldType = (typeof ruledFieldTypes)[number];
type Value = string | string[] | number | boolean | null | undefined;
type Checked = { stored?: string; problem?: string };

export const MAX_LENGTH = 10_000;
export const MAX_OPTIONS = 100;
const MAX_OPTION_LENGTH = 200;
const MAX_ECHO = 40;
const MAX_NUMBER_LENGTH = 40;
const MAX_CACHED_PATTERNS = 100;

const BOUNDS = [
  ['minLength', 'maxLength'],
  ['min', 'max'],
  ['minSelected', 'maxSelected'],
] as const;

/** The upper bounds below their lower ones, as [the upper rule, the problem]. */
export const boundProblems = (rules: FieldRules) =>
  BOUNDS.flatMap(([low, high]) => {
    const [from, to] = [rules[low], rules[high]];
    return from !== undefined && to !== undefined && from > to ? [[high, `must be at least ${low} (${from})`] as const] : [];
  });

// ---- compiled patterns ----

// Compiling is the costly part, and a form checks the same few patterns over and over; the bound keeps senders'
// patterns from filling memory. The least recently used pattern goes first.
const compiled = new Map<string, RE2JS>();

/** The pattern compiled by RE2, from the cache when it was compiled lately. Throws RE2's exception when it does not compile. */
export function compiledPattern(pattern: string): RE2JS {
  const cached = compiled.get(pattern);
  if (cached) {
    compiled.delete(pattern);
    compiled.set(pattern, cached);
    return cached;
  }
  const fresh = RE2JS.compile(pattern);
  if (compiled.size >= MAX_CACHED_PATTERNS) compiled.delete(compiled.keys().next().value!);
  compiled.set(pattern, fresh);
  return fresh;
}

/** How many compiled patterns the cache holds (for the test of its bound). */
export function cachedPatternCount(): number {
  return compiled.size;
}

// ---- which rules apply to which type ----

const CHOICES: readonly RuledFieldType[] = optionFieldTypes;
const APPLIES: Record<keyof FieldRules, readonly RuledFieldType[]> = {
  required: ['text', 'number', 'email', 'phone', ...CHOICES, ...uploadFieldTypes],
  minLength: ['text', 'email'],
  maxLength: ['text', 'email'],
  pattern: ['text', 'email'],
  patternMessage: ['text', 'email'],
  min: ['number'],
  max: ['number'],
  step: ['number'],
  decimals: ['number'],
  minSelected: ['checkboxGroup', 'multiSelect'],
  maxSelected: ['checkboxGroup', 'multiSelect'],
};
const aField = (type: RuledFieldType) => `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} field`;

/** What is wrong with the rules (and options) of a field of this type; [] when nothing. The rules are those FieldRulesSchema passed. */
export function rulesProblems(type: RuledFieldType, rules: FieldRules, options?: string[]): string[] {
  const problems: string[] = [];
  for (const [rule, value] of Object.entries(rules) as [keyof FieldRules, unknown][]) {
    if (value !== undefined && APPLIES[rule] && !APPLIES[rule].includes(type)) problems.push(`${rule} does not apply to ${aField(type)}`);
  }
  if (rules.patternMessage !== undefined && rules.pattern === undefined) problems.push('patternMessage needs a pattern');
  for (const [high, problem] of boundProblems(rules)) problems.push(`${high} ${problem}`);
  if (!CHOICES.includes(type)) {
    if (options !== undefined) problems.push(`options do not apply to ${aField(type)}`);
    return problems;
  }
  if (!options || options.length === 0) return [...problems, `options are required for ${aField(type)}`];
  problems.push(...optionProblems(options));
  for (const rule of ['minSelected', 'maxSelected'] as const) {
    const count = rules[rule];
    if (count !== undefined && count > options.length) problems.push(`${rule} must be at most the number of options (${options.length})`);
  }
  return problems;
}

function optionProblems(options: string[]): string[] {
  const problems = options.length > MAX_OPTIONS ? [`options must be at most ${MAX_OPTIONS}`] : [];
  const seen = new Set<string>();
  options.forEach((option, index) => {
    // A blank option could never be chosen: a blank value counts as none.
    if (typeof option !== 'string' || option.trim() === '') problems.push(`options.${index} must not be empty`);
    else if (option.length > MAX_OPTION_LENGTH) problems.push(`options.${index} must be at most ${MAX_OPTION_LENGTH} characters`);
    else if (seen.has(option)) problems.push(`options.${index} ("${echo(option)}") is listed twice`);
    seen.add(option);
  });
  return problems;
}

// ---- checking a value ----

/** At most MAX_ECHO characters of what the user typed, so that a problem never repeats a long value back. */
function echo(value: string): string {
  const points = [...value];
  return points.length > MAX_ECHO ? `${points.slice(0, MAX_ECHO).join('')}…` : value;
}

const isEmpty = (value: Value) =>
  value === null || value === undefined || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);

/**
 * The value checked against its field's type and rules: `{ stored }`, normalized, or `{ problem }`; `{}` when it is
 * empty and need not be filled. Choices are checked against `options` (which rulesProblems has passed).
 */
export function checkValue(type: RuledFieldType, rules: FieldRules, value: Value, options?: string[]): Checked {
  if (isEmpty(value)) return rules.required === false ? {} : { problem: 'is required' };
  switch (type) {
    case 'text':
      return checkText(rules, value);
    case 'email':
      return checkEmail(rules, value);
    case 'number':
      return checkNumber(rules, value);
    case 'phone':
      return checkPhone(value);
    case 'radio':
    case 'dropdown':
      return checkChoice(value, options ?? []);
    case 'checkboxGroup':
    case 'multiSelect':
      return checkSelection(rules, value, options ?? []);
    case 'image':
    case 'attachment':
      return checkUploadId(type, value);
  }
}

// An upload's TypeID (src/domain/ids.ts): the server then checks that the signer uploaded it, and what it is.
const UPLOAD_ID = /^upl_[0-7][0-9a-hjkmnp-tv-z]{25}$/;

function checkUploadId(type: 'image' | 'attachment', value: Value): Checked {
  if (typeof value === 'string' && UPLOAD_ID.test(value.trim())) return { stored: value.trim() };
  return { problem: `must be the id of a file you uploaded (upl_…): it is ${type === 'image' ? 'an image' : 'an attachment'} field` };
}

function checkText(rules: FieldRules, value: Value): Checked {
  if (typeof value !== 'string') return { problem: 'must be text' };
  const stored = value.trim();
  const problem = textProblem(rules, stored);
  return problem ? { problem } : { stored };
}

/** What breaks the length and pattern rules, for text and e-mail addresses; undefined when they pass. */
function textProblem(rules: FieldRules, value: string): string | undefined {
  const length = [...value].length;
  const maxLength = Math.min(rules.maxLength ?? MAX_LENGTH, MAX_LENGTH);
  if (rules.minLength !== undefined && length < rules.minLength) return `must be at least ${rules.minLength} characters`;
  if (length > maxLength) return `must be at most ${maxLength} characters`;
  if (rules.pattern !== undefined && !compiledPattern(rules.pattern).matches(value)) return rules.patternMessage ?? `must match the pattern ${rules.pattern}`;
  return undefined;
}

// Fixed, simple patterns without nested repetition: safe for the built-in RegExp.
const domainLabel = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// Letters, or an internationalized top-level domain in its ASCII form (xn--p1ai is .рф).
const topLevel = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{2,59})$/;
const spaceOrControl = /[\s\p{Cc}]/u;

function checkEmail(rules: FieldRules, value: Value): Checked {
  if (typeof value !== 'string') return { problem: 'must be text' };
  const trimmed = value.trim();
  const parts = trimmed.split('@');
  const invalid = { problem: `must be an e-mail address (name@example.com), not "${echo(trimmed)}"` };
  if (parts.length !== 2 || trimmed.length > 254) return invalid;
  const [local, domain] = [parts[0], parts[1].toLowerCase()];
  const labels = domain.split('.');
  if (local.length < 1 || local.length > 64 || spaceOrControl.test(local)) return invalid;
  if (labels.length < 2 || !labels.every((label) => domainLabel.test(label)) || !topLevel.test(labels[labels.length - 1])) return invalid;
  const stored = `${local}@${domain}`;
  const problem = textProblem(rules, stored);
  return problem ? { problem } : { stored };
}

function checkPhone(value: Value): Checked {
  const problem = 'must be a phone number with its country code (+49 …)';
  if (typeof value !== 'string') return { problem };
  const trimmed = value.trim();
  // E.164 as people write it: '+', the country code and the number, with separators anywhere after the first digit.
  if (trimmed.length > 40 || !/^\+\d[\d ().-]*$/.test(trimmed)) return { problem };
  const phone = parsePhoneNumberFromString(`+${trimmed.replace(/\D/g, '')}`);
  if (!phone || !phone.isValid()) return { problem: `must be a valid phone number, not "${echo(trimmed)}"` };
  return { stored: phone.number };
}

// ---- numbers, as exact decimals ----

/** A decimal as an integer and a scale: 12.5 is { units: 125n, scale: 1 }. BigInt, so that no comparison is rounded. */
type Decimal = { units: bigint; scale: number };
const plainDecimal = /^-?\d+(?:\.\d+)?$/;

/** A finite JS number as a plain decimal string: String() writes 1e21 and 1e-7 with exponents. */
function plainNumber(value: number): string {
  const written = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(written);
  if (!match) return written;
  const [, sign, first, rest = '', exponentText] = match;
  const digits = first + rest;
  const point = 1 + Number(exponentText);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  return `${sign}${digits.padEnd(point, '0')}${point < digits.length ? `.${digits.slice(point)}` : ''}`;
}

/** The canonical form of a plain decimal string: no leading zeros, no trailing fractional zeros, no '-0'. */
function canonical(text: string): string {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace('-', '').split('.');
  const digits = whole.replace(/^0+(?=\d)/, '');
  const decimals = fraction.replace(/0+$/, '');
  const unsigned = decimals ? `${digits}.${decimals}` : digits;
  return negative && unsigned !== '0' ? `-${unsigned}` : unsigned;
}

function toDecimal(text: string): Decimal {
  const [whole, fraction = ''] = text.split('.');
  return { units: BigInt(whole + fraction), scale: fraction.length };
}

/** Both decimals' units at their common scale, so that they compare as integers. */
function aligned(a: Decimal, b: Decimal): [bigint, bigint] {
  const scale = Math.max(a.scale, b.scale);
  return [a.units * 10n ** BigInt(scale - a.scale), b.units * 10n ** BigInt(scale - b.scale)];
}

/** A rule's bound (a JS number) as a decimal. */
const decimalOf = (bound: number) => toDecimal(canonical(plainNumber(bound)));
function isBelow(a: Decimal, b: Decimal): boolean {
  const [x, y] = aligned(a, b);
  return x < y;
}

/** The value as a canonical decimal string, or undefined when it is not a number written plainly. */
function parseNumber(value: Value): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? canonical(plainNumber(value)) : undefined;
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed.length <= MAX_NUMBER_LENGTH && plainDecimal.test(trimmed) ? canonical(trimmed) : undefined;
}

function checkNumber(rules: FieldRules, value: Value): Checked {
  const stored = parseNumber(value);
  if (stored === undefined) return { problem: 'must be a number, written like 1234.5' };
  const number = toDecimal(stored);
  if (rules.decimals !== undefined && number.scale > rules.decimals) {
    return { problem: rules.decimals === 0 ? 'must be a whole number' : `must be a number of at most ${rules.decimals} decimals` };
  }
  if (rules.min !== undefined && isBelow(number, decimalOf(rules.min))) return { problem: `must be at least ${rules.min}` };
  if (rules.max !== undefined && isBelow(decimalOf(rules.max), number)) return { problem: `must be at most ${rules.max}` };
  if (rules.step !== undefined && rules.step > 0 && !onStep(number, decimalOf(rules.step), decimalOf(rules.min ?? 0))) {
    return { problem: rules.min ? `must be ${rules.min} plus a multiple of ${rules.step}` : `must be a multiple of ${rules.step}` };
  }
  return { stored };
}

/** Whether value − base is a whole multiple of step (the steps count from min, as an HTML number input's do). */
function onStep(value: Decimal, step: Decimal, base: Decimal): boolean {
  const [valueUnits, baseUnits] = aligned(value, base);
  const offset: Decimal = { units: valueUnits - baseUnits, scale: Math.max(value.scale, base.scale) };
  const [offsetUnits, stepUnits] = aligned(offset, step);
  return offsetUnits % stepUnits === 0n;
}

// ---- choices ----

/** Options for a message: the first ten, which is enough to say what is meant. */
const listed = (options: string[]) => (options.length > 10 ? `${options.slice(0, 10).join(', ')}, …` : options.join(', '));

function checkChoice(value: Value, options: string[]): Checked {
  // Compared as given, not trimmed: the form sends an option back as it was listed.
  if (typeof value !== 'string' || !options.includes(value)) return { problem: `must be one of: ${listed(options)}` };
  return { stored: value };
}

/** A multi-valued field's choices: an array, or a JSON array as a string (as a form posts it); undefined when neither. */
function chosenOf(value: Value): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string' || !value.trim().startsWith('[')) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function checkSelection(rules: FieldRules, value: Value, options: string[]): Checked {
  const chosen = chosenOf(value);
  if (!chosen) return { problem: 'must be a list of options' };
  if (chosen.length === 0) return rules.required === false ? {} : { problem: 'is required' };
  // More choices than options cannot all be options, once each: refused before the options are searched for them.
  if (chosen.length > options.length || !chosen.every((item) => typeof item === 'string' && options.includes(item)))
    return { problem: `must be chosen from: ${listed(options)}` };
  if (new Set(chosen).size !== chosen.length) return { problem: 'must not choose an option twice' };
  const counted = (count: number) => `${count} option${count === 1 ? '' : 's'}`;
  if (rules.minSelected !== undefined && chosen.length < rules.minSelected) return { problem: `must have at least ${counted(rules.minSelected)} chosen` };
  if (rules.maxSelected !== undefined && chosen.length > rules.maxSelected) return { problem: `must have at most ${counted(rules.maxSelected)} chosen` };
  return { stored: JSON.stringify(options.filter((option) => chosen.includes(option))) };
}
