// The zod schemas of field rules and conditions in request bodies, apart from the rules and conditions themselves so
// that the signer page's bundle, which runs those, carries no zod. The messages are set here, not left to
// src/api/validation.ts's error map, so that each names what a sender must fix in their own words.
import { z } from 'zod';
import { type FieldCondition, KINDS, MAX_DEPTH, MAX_TESTS, MAX_VALUES } from './conditions';
import { boundProblems, compiledPattern, type FieldRules, MAX_LENGTH, MAX_OPTIONS } from './rules';

const strictness = {
  error: (issue: z.core.$ZodRawIssue) => (issue.code === 'unrecognized_keys' ? `has unknown field(s): ${issue.keys.join(', ')}` : 'must be an object'),
};
// ---- rules ----

const wholeNumber = (max: number) =>
  z
    .number({ error: `must be a whole number from 0 to ${max}` })
    .int({ error: `must be a whole number from 0 to ${max}` })
    .min(0, { error: `must be a whole number from 0 to ${max}` })
    .max(max, { error: `must be a whole number from 0 to ${max}` })
    .optional();
const optionalText = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` })
    .optional();
const finite = z.number({ error: 'must be a number' }).optional();

/** Why RE2 refuses a pattern, or undefined when it compiles. */
function patternError(pattern: string): string | undefined {
  try {
    compiledPattern(pattern);
    return undefined;
  } catch (error) {
    return (error instanceof Error ? error.message : String(error)).replace(/^error parsing regexp: /, '');
  }
}

const rulesShape = z.strictObject(
  {
    required: z.boolean({ error: 'must be true or false' }).optional(),
    minLength: wholeNumber(MAX_LENGTH),
    maxLength: wholeNumber(MAX_LENGTH),
    pattern: optionalText(500).superRefine((pattern, ctx) => {
      const error = pattern === undefined ? undefined : patternError(pattern);
      if (error) ctx.addIssue({ code: 'custom', message: `must be a regular expression RE2 accepts: ${error}` });
    }),
    patternMessage: optionalText(200),
    min: finite,
    max: finite,
    step: z.number({ error: 'must be a number' }).positive({ error: 'must be greater than 0' }).optional(),
    decimals: wholeNumber(10),
    minSelected: wholeNumber(MAX_OPTIONS),
    maxSelected: wholeNumber(MAX_OPTIONS),
  },
  strictness,
);

/** The rules but `required` as keys of their own, for a field's schema that has `required` already (its bounds are checked by rulesProblems). */
export const { shape: ruleKeys } = rulesShape.omit({ required: true });

/** The zod schema of FieldRules for API bodies: strict, with bounds on each rule and each lower bound at most its upper one. */
export const FieldRulesSchema: z.ZodType<FieldRules> = rulesShape.superRefine((rules, ctx) => {
  for (const [high, message] of boundProblems(rules)) ctx.addIssue({ code: 'custom', path: [high], message });
});

// ---- conditions ----

const requiredText = (max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` });
// Values are compared trimmed, and a blank value counts as none: a blank listed value could never match.
const listedValue = requiredText(200).refine((value) => value.trim() !== '', { error: 'must not be blank' });

const testSchema = z
  .strictObject(
    {
      field: requiredText(100),
      is: z.enum(KINDS, { error: (issue) => (issue.input === undefined ? 'is required' : `must be one of: ${KINDS.join(', ')}`) }),
      values: z
        .array(listedValue, { error: 'must be a list of strings' })
        .min(1, { error: 'must have at least one value' })
        .max(MAX_VALUES, { error: `must have at most ${MAX_VALUES} values` })
        .optional(),
    },
    strictness,
  )
  .superRefine((test, ctx) => {
    const lists = test.is === 'equals' || test.is === 'notEquals';
    if (lists && !test.values) ctx.addIssue({ code: 'custom', path: ['values'], message: `is required for "${test.is}"` });
    if (!lists && test.values) ctx.addIssue({ code: 'custom', path: ['values'], message: `must not be given for "${test.is}"` });
  });

const isGroup = (input: unknown) =>
  typeof input === 'object' && input !== null && !Array.isArray(input) && (Object.hasOwn(input, 'all') || Object.hasOwn(input, 'any'));

const listOf = (items: z.ZodType) =>
  z
    .array(items, { error: 'must be a list of conditions' })
    .min(1, { error: 'must have at least one condition' })
    .max(MAX_TESTS, { error: `must have at most ${MAX_TESTS} conditions` });

// A condition inside `depth` groups. The input is sent to the schema its keys ask for (a group or a test), so that
// a 400 names what is wrong inside it rather than zod's "Invalid input" of a union. A group below MAX_DEPTH is refused.
function conditionAt(depth: number): z.ZodType<FieldCondition> {
  const items = depth < MAX_DEPTH ? conditionAt(depth + 1) : undefined;
  const all = items && z.strictObject({ all: listOf(items) }, strictness);
  const any = items && z.strictObject({ any: listOf(items) }, strictness);
  return z.unknown().transform((input, ctx) => {
    if (isGroup(input) && !all) {
      ctx.addIssue({ code: 'custom', input, message: `must not nest all and any more than ${MAX_DEPTH} levels deep` });
      return z.NEVER;
    }
    const schema = !isGroup(input) ? testSchema : Object.hasOwn(input as object, 'all') ? all! : any!;
    const result = schema.safeParse(input);
    if (result.success) return result.data as FieldCondition;
    for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', input, path: issue.path, message: issue.message });
    return z.NEVER;
  });
}

/**
 * FieldConditionSchema as JSON Schema, for the OpenAPI document: the schema itself checks by hand, so that its 400s
 * name what is wrong, and a generated description would say nothing. Groups nest MAX_DEPTH levels, as the schema's.
 */
export function fieldConditionJsonSchema(depth = 0): object {
  const name = { type: 'string', minLength: 1, maxLength: 100 };
  const tests = [
    { type: 'object', additionalProperties: false, required: ['field', 'is'], properties: { field: name, is: { enum: ['filled', 'empty'] } } },
    {
      type: 'object',
      additionalProperties: false,
      required: ['field', 'is', 'values'],
      properties: {
        field: name,
        is: { enum: ['equals', 'notEquals'] },
        values: { type: 'array', minItems: 1, maxItems: MAX_VALUES, items: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } },
      },
    },
  ];
  if (depth >= MAX_DEPTH) return { anyOf: tests };
  const group = (key: 'all' | 'any') => ({
    type: 'object',
    additionalProperties: false,
    required: [key],
    properties: { [key]: { type: 'array', minItems: 1, maxItems: MAX_TESTS, items: fieldConditionJsonSchema(depth + 1) } },
  });
  return { anyOf: [...tests, group('all'), group('any')] };
}

/** The zod schema of FieldCondition (for API request bodies): strict objects, 1–20 tests per all/any, values 1–50 strings of 1–200 chars, keys 1–100 chars, depth ≤ 3; its messages in the style "must be ...". */
export const FieldConditionSchema: z.ZodType<FieldCondition> = conditionAt(0);
