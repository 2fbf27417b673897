// A signer's form as a whole: the checks made when a template or request is created (each field's rules, options and
// formula, and the wiring of conditions and formulas between fields), and the answer to a submission (which fields
// are shown, each shown field's value checked, each calculated field computed). The server decides with these; the
// signer page runs the same code as a convenience. Pure code without Node.
import { CalculationSyntaxError, parseCalculation, type Calculation } from './calculation';
import { type FieldCondition, formWiringProblems, shownFields } from './conditions';
import { checkValue, type FieldRules, type RuledFieldType, rulesProblems } from './rules';
import { ruledFieldTypes, selectionFieldTypes } from './types';

/** The types a form answers for; signature, initials and date fields stay with the signature. */
export type FormFieldType = RuledFieldType | 'checkbox' | 'calculated' | 'signerName' | 'signerEmail' | 'staticText';

/** One field as the form sees it. `key` names it in problems, conditions and formulas. */
export interface FormFieldDefinition {
  key: string;
  type: FormFieldType;
  rules?: FieldRules;
  options?: string[];
  showWhen?: FieldCondition;
  /** A calculated field's formula (src/fields/calculation.ts). */
  formula?: string;
}

/** A problem with one field ("rent", "must be at least 0"), or with the wiring between fields, which names them itself. */
export interface FieldProblem {
  field?: string;
  problem: string;
}

type Given = Readonly<Record<string, string | string[] | number | boolean | null | undefined>>;

const RULED: readonly FormFieldType[] = ruledFieldTypes;
const isRuled = (type: FormFieldType): type is RuledFieldType => RULED.includes(type);
const SELECTIONS: readonly FormFieldType[] = selectionFieldTypes;
// What a formula may read: numbers, entered or calculated.
const NUMERIC: readonly FormFieldType[] = ['number', 'calculated'];

/** The formula parsed, or the problem with it. */
function parsedFormula(field: FormFieldDefinition): { calculation?: Calculation; problem?: string } {
  if (field.formula === undefined) return { problem: 'formula is required: it is calculated' };
  try {
    return { calculation: parseCalculation(field.formula) };
  } catch (error) {
    if (error instanceof CalculationSyntaxError) return { problem: `formula does not parse: ${error.message}` };
    throw error;
  }
}

/**
 * What is wrong with a form as it is created: each field's rules and options for its type, a formula that does not
 * parse, reads a field that is not a number or is given to a field that is not calculated, and conditions or formulas
 * naming unknown fields or going round in a circle. Empty when the form can be sent.
 */
export function formProblems(fields: FormFieldDefinition[]): FieldProblem[] {
  const types = new Map(fields.map((field) => [field.key, field.type]));
  const problems: FieldProblem[] = [];
  const wiring = fields.map((field) => {
    const add = (problem: string) => problems.push({ field: field.key, problem });
    if (isRuled(field.type)) rulesProblems(field.type, field.rules ?? {}, field.options).forEach(add);
    else if (field.options !== undefined) add(`options do not apply to a ${field.type} field`);
    if (field.type !== 'calculated') {
      if (field.formula !== undefined) add(`formula does not apply to a ${field.type} field`);
      return { key: field.key, showWhen: field.showWhen };
    }
    const { calculation, problem } = parsedFormula(field);
    if (problem) add(problem);
    for (const read of calculation?.references ?? []) {
      const type = types.get(read);
      if (type !== undefined && !NUMERIC.includes(type)) add(`has a formula that reads "${read}", a ${type} field: a formula reads number fields`);
    }
    return { key: field.key, showWhen: field.showWhen, reads: calculation?.references };
  });
  return [...problems, ...formWiringProblems(wiring).map((problem) => ({ problem }))];
}

/** What a submission comes to: the values to store (by key), the fields hidden by their conditions, and every problem. */
export interface FilledForm {
  values: Record<string, string>;
  hidden: string[];
  problems: FieldProblem[];
}

/** Who fills the form: the name and e-mail fields take theirs. */
export interface FormSigner {
  name: string;
  email: string;
}

/**
 * A signer's values checked against a form that formProblems passed. A field is shown when its condition holds on the
 * values of the shown fields; a hidden field's value is dropped and it is not required. A shown field's value is
 * checked by its rules; a calculated field is computed here (a value given for it is refused, as for the signer's
 * name and e-mail, which are theirs). A value for a key of no field is refused.
 */
export function fillForm(fields: FormFieldDefinition[], given: Given, signer: FormSigner): FilledForm {
  const byKey = new Map(fields.map((field) => [field.key, field]));
  const problems: FieldProblem[] = Object.keys(given)
    .filter((key) => !byKey.has(key))
    .map((key) => ({ field: key, problem: 'is no field of this form' }));
  const formulas = new Map(fields.flatMap((field) => (field.type === 'calculated' ? [[field.key, parsedFormula(field).calculation]] : [])));
  // Conditions and formulas read the checked values of shown fields. A formula's result may show a field and a field
  // shown may feed a formula, so both are settled together until nothing changes; the form has no circle, so each
  // round settles at least one more step of the longest chain.
  let values: Record<string, string> = {};
  let shown = new Set<string>();
  for (let round = 0; round <= fields.length; round++) {
    const next = settle(fields, given, signer, formulas, values);
    const nextShown = shownFields(fields, conditionValues(fields, next.values));
    const nextValues = filterKeys(next.values, nextShown);
    const stable = sameSet(nextShown, shown) && sameValues(nextValues, values);
    values = nextValues;
    shown = nextShown;
    if (stable) break;
  }
  for (const field of fields) {
    if (!shown.has(field.key)) continue;
    const add = (problem: string) => problems.push({ field: field.key, problem });
    const isGiven = Object.hasOwn(given, field.key) && given[field.key] !== undefined;
    if (isRuled(field.type)) {
      const { problem } = checkValue(field.type, field.rules ?? {}, isGiven ? (given[field.key] as never) : undefined, field.options);
      if (problem) add(problem);
    } else if (field.type === 'checkbox') {
      const ticked = isGiven ? checkboxValue(given[field.key]) : undefined;
      if (isGiven && ticked === undefined) add('must be true or false: it is a checkbox');
      else if (field.rules?.required !== false && ticked !== 'true') add('must be ticked: it is required');
    } else if (isGiven) add(`must not be given: ${takenAs(field.type)}`);
  }
  return { values, hidden: fields.filter((field) => !shown.has(field.key)).map((field) => field.key), problems };
}

const TAKEN_AS: Partial<Record<FormFieldType, string>> = {
  calculated: 'it is calculated',
  signerName: 'it shows your name',
  signerEmail: 'it shows your e-mail address',
  staticText: 'it is the sender’s text',
};
const takenAs = (type: FormFieldType) => TAKEN_AS[type] ?? 'it takes no value';

// One round: each field's value from what was given (checked) or computed from the last round's values.
function settle(fields: FormFieldDefinition[], given: Given, signer: FormSigner, formulas: Map<string, Calculation | undefined>, last: Record<string, string>) {
  const values: Record<string, string> = {};
  for (const field of fields) {
    let value: string | undefined;
    if (isRuled(field.type)) {
      const raw = Object.hasOwn(given, field.key) ? given[field.key] : undefined;
      value = checkValue(field.type, { ...field.rules, required: false }, raw as never, field.options).stored;
    } else if (field.type === 'checkbox') {
      value = checkboxValue(Object.hasOwn(given, field.key) ? given[field.key] : undefined);
    } else if (field.type === 'calculated') {
      const result = formulas.get(field.key)?.evaluate(last);
      value = result === null || result === undefined ? undefined : String(result);
    } else if (field.type === 'signerName') value = signer.name;
    else if (field.type === 'signerEmail') value = signer.email;
    if (value !== undefined) values[field.key] = value;
  }
  return { values };
}

/** A checkbox's value as stored ('true' or 'false'), from true/false or their text; undefined for anything else. */
function checkboxValue(value: Given[string]): string | undefined {
  if (typeof value === 'boolean') return String(value);
  return value === 'true' || value === 'false' ? value : undefined;
}

/** The values as conditions read them: a selection as its list of options. */
function conditionValues(fields: FormFieldDefinition[], values: Record<string, string>): Record<string, string | string[]> {
  const read: Record<string, string | string[]> = {};
  for (const field of fields) {
    if (!Object.hasOwn(values, field.key)) continue;
    read[field.key] = SELECTIONS.includes(field.type) ? (JSON.parse(values[field.key]) as string[]) : values[field.key];
  }
  return read;
}

const filterKeys = (values: Record<string, string>, keep: Set<string>) => Object.fromEntries(Object.entries(values).filter(([key]) => keep.has(key)));
const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((key) => b.has(key));
function sameValues(a: Record<string, string>, b: Record<string, string>) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}
