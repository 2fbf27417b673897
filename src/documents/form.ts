// A signer's fields as one form (src/fields/form.ts): the fields it answers for, the key each goes by in conditions
// and formulas (its label), and the problems of a request's or template's fields named by their paths in the body.
// Signature, initials and date fields stay outside the form: they take the signature and its date.
import { type FormFieldDefinition, type FormFieldType, formProblems } from '../fields/form';
import type { FieldRules } from '../fields/rules';
import { type FieldType, formFieldTypes, ruledFieldTypes, uploadFieldTypes } from '../fields/types';
import { storedUploadOf, type UploadedFile } from '../fields/uploads';
import type { SignerField } from './fields';

/** Longest value of a text field, in characters: it is drawn in its box on the sealed PDF. */
export const MAX_TEXT_VALUE = 500;

export const isFormField = (field: { type: FieldType }) => (formFieldTypes as readonly FieldType[]).includes(field.type);

const RULE_KEYS = ['minLength', 'maxLength', 'pattern', 'patternMessage', 'min', 'max', 'step', 'decimals', 'minSelected', 'maxSelected'] as const;
const LOGIC_KEYS = ['options', 'optionBoxes', ...RULE_KEYS, 'showWhen', 'formula', 'text'] as const;
const WITH_BOXES: readonly FieldType[] = ['radio', 'checkboxGroup'];

/** A field as a request or template places it: its type, label and required, and whatever logic it carries. */
export type PlacedField = Pick<SignerField, 'type' | 'label' | 'required' | (typeof LOGIC_KEYS)[number]>;

/** The signer's form: each form field's definition, and the position in the signer's fields of each key. */
export interface SignerForm {
  definitions: FormFieldDefinition[];
  positionOf: Map<string, number>;
}

/**
 * The form of a signer's fields. A field goes by its label when no other field of the signer has that label, else by
 * its path (`fields.3`), which no condition or formula names; a template's labels are unique, and a request that uses
 * conditions or formulas must make them unique (signerFieldProblems).
 */
export function formOf(fields: PlacedField[]): SignerForm {
  const count = new Map<string, number>();
  for (const { label } of fields) if (label) count.set(label, (count.get(label) ?? 0) + 1);
  const definitions: FormFieldDefinition[] = [];
  const positionOf = new Map<string, number>();
  fields.forEach((field, index) => {
    if (!isFormField(field)) return;
    const key = field.label && count.get(field.label) === 1 ? field.label : `fields.${index}`;
    const rules: FieldRules = { required: field.required ?? false };
    for (const rule of RULE_KEYS) if (field[rule] !== undefined) (rules as Record<string, unknown>)[rule] = field[rule];
    if (field.type === 'text') rules.maxLength = Math.min(field.maxLength ?? MAX_TEXT_VALUE, MAX_TEXT_VALUE);
    definitions.push({ key, type: field.type as FormFieldType, rules, options: field.options, showWhen: field.showWhen, formula: field.formula });
    positionOf.set(key, index);
  });
  return { definitions, positionOf };
}

const usesLogic = (field: PlacedField) => field.showWhen !== undefined || field.formula !== undefined;
const aField = (type: string) => `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} field`;

/** A problem of a signer's fields: of one (at its position, and of one of its keys), or of the wiring between them. */
export interface FieldListProblem {
  position?: number;
  key?: string;
  problem: string;
}

/**
 * What is wrong with one signer's fields as a form: the logic keys a type does not take, a static text without its
 * text, option boxes that do not match the options, labels used twice where conditions or formulas name fields by
 * label, and what formProblems finds (rules, options, formulas, unknown names and circles). `nameOf` names another
 * field in a message (`signers.0.fields.2`).
 */
export function signerFieldProblems(fields: PlacedField[], nameOf: (position: number) => string): FieldListProblem[] {
  const problems: FieldListProblem[] = [];
  fields.forEach((field, position) => {
    const add = (key: string, problem: string) => problems.push({ position, key, problem });
    if (!isFormField(field)) {
      for (const key of LOGIC_KEYS) if (field[key] !== undefined) add(key, `does not apply to ${aField(field.type)}`);
      return;
    }
    if (field.type === 'staticText' && field.text === undefined) add('text', 'is required: it is a staticText field');
    if (field.type !== 'staticText' && field.text !== undefined) add('text', `does not apply to ${aField(field.type)}`);
    if (field.type === 'text' && field.maxLength !== undefined && field.maxLength > MAX_TEXT_VALUE)
      add('maxLength', `must be at most ${MAX_TEXT_VALUE}: a text field holds at most ${MAX_TEXT_VALUE} characters`);
    if (field.optionBoxes !== undefined) {
      if (!WITH_BOXES.includes(field.type)) add('optionBoxes', `does not apply to ${aField(field.type)}`);
      else if (field.optionBoxes.length !== (field.options?.length ?? 0))
        add('optionBoxes', `must have one box per option: ${field.options?.length ?? 0} option(s), ${field.optionBoxes.length} box(es)`);
    }
  });
  if (fields.some(usesLogic)) problems.push(...labelProblems(fields, nameOf));
  const { definitions, positionOf } = formOf(fields);
  for (const { field, problem } of formProblems(definitions))
    problems.push({ position: field === undefined ? undefined : positionOf.get(field), ...keyed(problem) });
  return problems;
}

// "minLength does not apply …" names the key first: it goes in the path (fields.0.minLength), as the schema's problems do.
function keyed(problem: string): { key?: string; problem: string } {
  const [first, ...rest] = problem.split(' ');
  return (LOGIC_KEYS as readonly string[]).includes(first.replace(/\.\d+$/, '')) && rest.length ? { key: first, problem: rest.join(' ') } : { problem };
}

/** Labels name fields in conditions and formulas, so each is used once among the signer's fields. */
function labelProblems(fields: PlacedField[], nameOf: (position: number) => string): FieldListProblem[] {
  const first = new Map<string, number>();
  const problems: FieldListProblem[] = [];
  fields.forEach(({ label }, position) => {
    if (!label) return;
    const other = first.get(label);
    if (other === undefined) first.set(label, position);
    else
      problems.push({
        position,
        key: 'label',
        problem: `must be unique among the signer's fields, which conditions and formulas name by label: "${label}" is also ${nameOf(other)}.label`,
      });
  });
  return problems;
}

/** A problem as a details string: `name` is its field's path in the body, `root` the fields' own. */
export const describeFieldProblem = ({ position, key, problem }: FieldListProblem, name: (position: number) => string, root: string) =>
  position === undefined ? `${root} ${problem}` : `${name(position)}${key ? `.${key}` : ''} ${problem}`;

/** A value as the API shows it: typed by its field (a number, true or false, a list), null when empty. */
export type TypedValue = string | number | boolean | string[] | UploadedFile | null;

/** A field's stored value (text, as sealed) in its type: numbers as numbers, a checkbox's as true or false, a selection's as its list. */
export function typedValue(type: SignerField['type'], stored: string | null | undefined): TypedValue {
  if (stored === undefined || stored === null || stored === '') return null;
  if (type === 'number' || type === 'calculated') return Number(stored);
  if (type === 'checkbox') return stored === 'true';
  if (type === 'image' || type === 'attachment') return storedUploadOf(stored) ?? null;
  if (type === 'multiSelect' || type === 'checkboxGroup') {
    try {
      const chosen: unknown = JSON.parse(stored);
      return Array.isArray(chosen) ? chosen.map(String) : [stored];
    } catch {
      return [stored];
    }
  }
  return stored;
}

/** What a signed form field holds, as the API and webhooks show it: its value typed, and whether its condition hid it. */
export interface Filled {
  value: TypedValue;
  hidden: boolean;
}

/**
 * What the field at `position` holds once its signer signed (the sender's prefill, else the signer's value), or
 * undefined for a field outside the form and for static text, which hold nothing.
 */
export function filledOf(field: SignerField, position: number, signed: { fieldValues?: Record<string, string>; hiddenFields?: number[] }): Filled | undefined {
  if (!isFormField(field) || field.type === 'staticText') return undefined;
  const hidden = signed.hiddenFields?.includes(position) ?? false;
  const stored = hidden ? null : (field.value ?? signed.fieldValues?.[String(position)]);
  return { value: typedValue(field.type, stored), hidden };
}

/** A signer's answers for a webhook: each form field's position, type, label and what it holds. */
export const formAnswers = (fields: SignerField[] | null, signed: { fieldValues?: Record<string, string>; hiddenFields?: number[] }) =>
  (fields ?? []).flatMap((field, position) => {
    const filled = filledOf(field, position, signed);
    return filled ? [{ position, type: field.type, ...(field.label ? { label: field.label } : {}), ...filled }] : [];
  });

// What search reads of a signer's answers: what they gave (text, numbers, options); not a tick, a result worked out
// from the others, or the signer's own name and e-mail, which search has already.
// Nor a file: its name is not the signer's answer.
const SEARCHED: readonly FieldType[] = ruledFieldTypes.filter((type) => !(uploadFieldTypes as readonly string[]).includes(type));

/** A signer's answers as words for search, '' when there are none. */
export const searchableAnswers = (answers: ReturnType<typeof formAnswers>) =>
  answers
    .filter((answer) => SEARCHED.includes(answer.type) && answer.value !== null)
    .map((answer) => (Array.isArray(answer.value) ? answer.value.join(' ') : String(answer.value)))
    .join(' ');
