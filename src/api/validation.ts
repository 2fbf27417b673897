/// <reference lib="es2024.string" />
import { z } from 'zod';
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { validationError } from '../errors';
import { idPattern, type IdKind } from '../domain/ids';

extendZodWithOpenApi(z);

// Messages are predicates ("is required", "must be …"); parseInput puts the field name in front,
// so every details string reads as the API documents it: "fileName is required".
z.config({
  customError: (issue) => {
    if (issue.code === 'invalid_type') {
      if (issue.input === undefined) return 'is required';
      return `must be ${issue.expected === 'object' ? 'an object' : `a ${issue.expected}`}`;
    }
    if (issue.code === 'too_small' && issue.origin === 'string') {
      return issue.minimum === 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters`;
    }
    if (issue.code === 'too_big' && issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
    if (issue.code === 'too_small' && issue.origin === 'array') return `must have at least ${issue.minimum} item(s)`;
    if (issue.code === 'too_big' && issue.origin === 'array') return `must have at most ${issue.maximum} items`;
    if (issue.code === 'too_small' && issue.origin === 'number') return `must be at least ${issue.minimum}`;
    if (issue.code === 'too_big' && issue.origin === 'number') return `must be at most ${issue.maximum}`;
    if (issue.code === 'invalid_value') return `must be one of: ${issue.values.join(', ')}`;
    if (issue.code === 'invalid_format') return issue.format === 'email' ? 'must be a valid e-mail address' : `must be a valid ${issue.format}`;
    if (issue.code === 'unrecognized_keys') return `has unknown field(s): ${issue.keys.join(', ')}`;
    return undefined;
  },
});

function describeIssue(issue: z.core.$ZodIssue) {
  const field = issue.path.map(String).join('.');
  return field ? `${field} ${issue.message}` : `body ${issue.message}`;
}

/**
 * Parses input with a schema; every violated rule becomes one details string of a 400 validation_error.
 * Text that cannot be stored as given (see `textProblems`) is refused first, before the schema reads it.
 */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  assertStorableText(input);
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error.issues.map(describeIssue));
  return result.data;
}

/**
 * parseInput for a body whose handler checks more rules once its shape is right: when the shape is wrong,
 * `rules` still check what they can of the raw input, so that the 400 lists every problem at once.
 */
export async function parseInputWithRules<Schema extends z.ZodType>(
  schema: Schema,
  input: unknown,
  rules: (input: unknown) => Promise<string[]>,
): Promise<z.output<Schema>> {
  assertStorableText(input);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationError([...result.error.issues.map(describeIssue), ...(await rules(input))]);
}

/** Every problem of `input` against `schema`, each naming its field under `at` (nothing when it is right). */
export function problemsOf(schema: z.ZodType, input: unknown, at: string): string[] {
  const flawed = textProblems(input);
  if (flawed.length > 0) return flawed.map((problem) => `${at}${problem.startsWith('body ') ? problem.slice(4) : `.${problem}`}`);
  const result = schema.safeParse(input);
  return result.success ? [] : result.error.issues.map((issue) => `${[at, ...issue.path.map(String)].join('.')} ${issue.message}`);
}

/**
 * The properties of `input` that each pass their own schema of `object`: what rules can still check of
 * an object whose shape is wrong elsewhere. Undefined when `input` is no object at all.
 */
export function validProperties<Shape extends z.ZodRawShape>(
  object: z.ZodObject<Shape>,
  input: unknown,
): { [Key in keyof Shape]?: z.output<Shape[Key]> } | undefined {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const valid: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(object.shape)) {
    const result = (schema as z.ZodType).safeParse((input as Record<string, unknown>)[key]);
    if (result.success) valid[key] = result.data;
  }
  return valid as { [Key in keyof Shape]?: z.output<Shape[Key]> };
}

/** How deep objects and arrays may nest in an input: more than any real body needs, and a bound on every walk over one. */
export const MAX_NESTING = 32;
const MAX_TEXT_PROBLEMS = 20;

// What is wrong with a piece of text, as the end of a details string ("name must not contain NUL characters").
const flawOf = (value: string) =>
  value.includes('\u0000')
    ? 'must not contain NUL characters'
    : value.isWellFormed()
      ? undefined
      : 'must be well-formed Unicode (it has an unpaired UTF-16 surrogate)';
const keyFlawOf = (key: string) =>
  key.includes('\u0000')
    ? 'must not have a field name with NUL characters'
    : key.isWellFormed()
      ? undefined
      : 'must not have a field name with an unpaired UTF-16 surrogate';

/**
 * What no text in an input may hold, in field names as in values: NUL, which PostgreSQL cannot store, and
 * an unpaired UTF-16 surrogate (JSON's "\\ud800"), which is no character at all: PostgreSQL refuses it in
 * JSON and a UTF-8 encoder replaces it, so it could never read back as given. One problem per field, naming
 * it; an input nested deeper than MAX_NESTING is refused whole. The walk is iterative: no input, however
 * deep, can exhaust the stack.
 */
export function textProblems(input: unknown): string[] {
  const problems: string[] = [];
  let more = 0;
  const report = (item: PendingValue, flaw: string) => (problems.length < MAX_TEXT_PROBLEMS ? problems.push(`${pathOf(item) || 'body'} ${flaw}`) : more++);
  // Depth first, children pushed last to first so that problems come in the input's order; a field's
  // path is spelled only for a problem (spelling every one cost more than the walk).
  const pending: PendingValue[] = [{ value: input, key: '', depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value, depth } = next;
    if (next.keyFlaw) {
      report(next.parent!, next.keyFlaw);
      continue;
    }
    if (typeof value === 'string') {
      const flaw = flawOf(value);
      if (flaw) report(next, flaw);
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    if (depth >= MAX_NESTING) return [`body must be nested at most ${MAX_NESTING} levels deep`];
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) pending.push({ value: value[index], parent: next, key: String(index), depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(value);
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index];
      pending.push({ value: (value as Record<string, unknown>)[key], parent: next, key, depth: depth + 1, keyFlaw: keyFlawOf(key) });
    }
  }
  if (more > 0) problems.push(`body has ${more} more such problem(s)`);
  return problems;
}

interface PendingValue {
  value: unknown;
  parent?: PendingValue;
  key: string;
  depth: number;
  /** What is wrong with `key` itself: reported for the object holding it, and its value left unread. */
  keyFlaw?: string;
}

function pathOf(item: PendingValue): string {
  const keys: string[] = [];
  for (let at: PendingValue | undefined = item; at?.parent; at = at.parent) keys.push(at.key);
  return keys.reverse().join('.');
}

function assertStorableText(input: unknown) {
  const problems = textProblems(input);
  if (problems.length > 0) throw validationError(problems);
}

/**
 * Text the service stores without asking the sender (a User-Agent, a forwarded address): made storable
 * rather than refused, an unpaired surrogate and a NUL each becoming U+FFFD.
 */
export const storableText = (value: string) => value.toWellFormed().replaceAll('\u0000', '\ufffd');

// ISO 8601 only (a date, or a date and time with an optional zone), years 1000–9999: `0`, `2024` or
// `March 7` are not dates here, and a year PostgreSQL cannot store is refused before it gets there. The
// same pattern is the OpenAPI document's, so whatever it allows is accepted ([0-9], not \d: one engine's
// \d is ASCII, another's any digit).
const ISO_DATE =
  /^[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,9})?)?(Z|[+-]([01][0-9]|2[0-3]):?[0-5][0-9])?)?$/;
// The last instant before year 10000 (UTC): a zone can push 9999-12-31 past it, where no resource was ever created.
const LAST_DATE = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A query-string date in ISO 8601, as a Date. */
export const queryDate = z
  .string()
  .refine((value) => ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)), { error: 'must be an ISO 8601 date' })
  .transform((value) => new Date(Math.min(Date.parse(value), LAST_DATE)))
  .openapi({
    type: 'string',
    pattern: ISO_DATE.source,
    description: 'ISO 8601: a date, or a date and time with an optional zone, years 1000–9999.',
    example: '2026-11-01T00:00:00Z',
  });

// RFC 3339, as OpenAPI's "date-time" means it, with seconds and a zone, on a day its month has.
const DATE_TIME =
  /^([1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$/;
const isDayOfItsMonth = (year: string, month: string, day: string) =>
  new Date(Date.UTC(Number(year), Number(month) - 1, Number(day))).getUTCDate() === Number(day);

/** A date and time in a JSON body, e.g. `2026-12-01T12:00:00Z`, kept as the string given. */
export const dateTime = z
  .string()
  .refine(
    (value) => {
      const match = DATE_TIME.exec(value);
      return !!match && isDayOfItsMonth(match[1], match[2], match[3]);
    },
    { error: 'must be an ISO 8601 date and time with a zone, e.g. 2026-12-01T12:00:00Z' },
  )
  .openapi({ type: 'string', format: 'date-time', pattern: DATE_TIME.source, example: '2026-12-01T12:00:00Z' });

/** The rule "`later` must be after `earlier`" of two optional query dates, as arguments of zod's refine. */
export const laterThan = <Earlier extends string, Later extends string>(
  earlier: Earlier,
  later: Later,
): [(query: { [key in Earlier | Later]?: Date }) => boolean, { path: string[]; error: string }] => [
  (query) => !query[earlier] || !query[later] || query[earlier] < query[later],
  { path: [later], error: `must be after ${earlier}` },
];

/** OpenAPI 3.1 (JSON Schema) keywords that zod-to-openapi's metadata type, written for 3.0, does not list. */
export const jsonSchemaKeywords = (keywords: {
  propertyNames?: object;
  contentEncoding?: string;
  contentMediaType?: string;
  if?: object;
  then?: object;
  else?: object;
  contains?: object;
  uniqueItems?: boolean;
}) => keywords as Record<string, never>;

// JSON Schema and PostgreSQL count characters by code point: an emoji is one character, not two UTF-16 units.
const codePointsAtMost = (maxLength: number) =>
  [(value: string) => value.length <= maxLength || [...value].length <= maxLength, { error: `must be at most ${maxLength} characters` }] as const;

/** A string of at most `maxLength` characters. */
export const text = (maxLength: number) =>
  z
    .string()
    .refine(...codePointsAtMost(maxLength))
    .openapi({ maxLength });

// A character that is neither a control character nor whitespace as any engine sees it (JavaScript's
// trim() and the \s of other regex engines differ on a few, so they are named).
export const VISIBLE_CHARACTER = /[^\s\u0000-\u001f\u007f-\u00a0\u1680\u180e\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** Text that must show something: at least one visible character (`blank` says what else); stored trimmed. */
export const visibleText = (maxLength: number, blank = 'is required') =>
  z
    .string()
    .refine(...codePointsAtMost(maxLength))
    .regex(VISIBLE_CHARACTER, { error: blank })
    .trim()
    .openapi({ maxLength, pattern: VISIBLE_CHARACTER.source });

export const pageLimit = z.coerce.number().int().min(1).max(100).default(20).openapi({ description: 'Page size, 1–100.' });

/** limit and cursor of a list of one kind of resource, whose cursor is the id of the previous page's last item. */
export const paginationQuery = (kind: IdKind) => ({
  limit: pageLimit,
  cursor: z.string().regex(idPattern(kind), { error: 'is not a valid cursor' }).optional().openapi({ description: 'nextCursor of the previous page.' }),
});

export { z };
