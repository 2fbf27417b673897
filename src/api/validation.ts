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

/** Parses input with a schema; every violated rule becomes one details string of a 400 validation_error. */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error.issues.map(describeIssue));
  return result.data;
}

/** A query-string date: ISO 8601 or anything Date.parse reads unambiguously, as a Date. */
export const queryDate = z
  .string()
  .refine((value) => !Number.isNaN(Date.parse(value)), { error: 'must be an ISO 8601 date' })
  .transform((value) => new Date(value));

export const paginationQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: 'Page size, 1–100.' }),
  cursor: z.string().max(200).optional().openapi({ description: 'nextCursor of the previous page.' }),
};

export { z };
