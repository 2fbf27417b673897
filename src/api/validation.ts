import { z } from 'zod';
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { validationError } from '../errors';

extendZodWithOpenApi(z);

// Messages are predicates ("is required", "must be …"); parseInput puts the field name in front,
// so every details string reads like the spec's: "fileName is required".
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
 * No text anywhere in the input may hold a NUL character: PostgreSQL cannot store one, so it would
 * otherwise fail deep in a query as a 500.
 */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const withNul = nulPaths(input);
  if (withNul.length) throw validationError(withNul.map((field) => `${field || 'body'} must not contain NUL characters`));
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error.issues.map(describeIssue));
  return result.data;
}

function nulPaths(value: unknown, at = ''): string[] {
  if (typeof value === 'string') return value.includes('\u0000') ? [at] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => nulPaths(item, at ? `${at}.${i}` : String(i)));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => (key.includes('\u0000') ? [at || 'body'] : nulPaths(item, at ? `${at}.${key}` : key)));
  }
  return [];
}

// ISO 8601 only (a date, or a date and time with an optional zone), years 1000–9999: `0`, `2024` or
// `March 7` are not dates here, and a year PostgreSQL cannot store is refused before it gets there.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** A query-string date in ISO 8601, as a Date. */
export const queryDate = z
  .string()
  .refine((value) => ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)) && Number(value.slice(0, 4)) >= 1000, { error: 'must be an ISO 8601 date' })
  .transform((value) => new Date(value));

export const paginationQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: 'Page size, 1–100.' }),
  cursor: z.string().max(200).optional().openapi({ description: 'nextCursor of the previous page.' }),
};

export { z };
