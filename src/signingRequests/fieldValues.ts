import { VISIBLE_CHARACTER } from '../api/validation';
import { undrawableTextProblem } from '../pdf/drawableText';
import { signatureImageProblem } from '../pdf/signatureImage';
import type { SignerField } from '../documents/fields';

/** Longest value of a text field, and of typed initials, in characters. */
export const MAX_TEXT_VALUE = 500;
export const MAX_TYPED_INITIALS = 20;
/** Drawn initials: a PNG data URL of at most 256 KB (sent once per initials field). */
export const MAX_DRAWN_INITIALS_BYTES = 256 * 1024;

const PNG_DATA_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/;
const characters = (value: string) => [...value].length;

/** "text field "rent" on page 1": how a problem names a field. */
const describe = (field: SignerField) => `${field.type} field${field.label ? ` "${field.label}"` : ''} on page ${field.page}`;

const isPrefilled = (field: SignerField) => field.value !== undefined && field.value !== null;

/** A checkbox's answer as stored ('true' or 'false'), from true/false or their text; undefined for anything else. */
function checkboxValue(value: string | boolean): string | undefined {
  if (typeof value === 'boolean') return String(value);
  return ['true', 'false'].includes(value) ? value : undefined;
}

/** Text as stored, or why the sealed PDF could not show it. */
function drawable(field: SignerField, value: string): { problem?: string; stored?: string } {
  const problem = undrawableTextProblem(value);
  return problem ? { problem: `${problem} (the ${describe(field)})` } : { stored: value };
}

/** Why a value does not fit its field (a "must …" predicate), or undefined; the value as stored. */
async function checkValue(field: SignerField, value: string | boolean): Promise<{ problem?: string; stored?: string }> {
  if (isPrefilled(field)) return { problem: `must not be given: the sender prefilled the ${describe(field)}` };
  switch (field.type) {
    case 'signature':
      return { problem: `must not be given: the ${describe(field)} takes your signature` };
    case 'date':
      return { problem: `must not be given: the ${describe(field)} is filled with the date of signing` };
    case 'checkbox': {
      const stored = checkboxValue(value);
      return stored === undefined ? { problem: `must be true or false: the ${describe(field)} is a checkbox` } : { stored };
    }
    case 'text':
      if (typeof value !== 'string') return { problem: `must be text: the ${describe(field)} holds text` };
      if (characters(value) > MAX_TEXT_VALUE) return { problem: `must be at most ${MAX_TEXT_VALUE} characters (the ${describe(field)})` };
      return drawable(field, value);
    case 'initials': {
      if (typeof value !== 'string') return { problem: `must be your initials, drawn (a PNG data URL) or typed: the ${describe(field)}` };
      if (!value.startsWith('data:')) {
        if (!VISIBLE_CHARACTER.test(value) || characters(value.trim()) > MAX_TYPED_INITIALS)
          return { problem: `must be your initials, 1 to ${MAX_TYPED_INITIALS} characters, or a drawing (a PNG data URL): the ${describe(field)}` };
        return drawable(field, value.trim());
      }
      if (!PNG_DATA_URL.test(value)) return { problem: `must be a PNG data URL (data:image/png;base64,…): the ${describe(field)}` };
      if ((value.length - value.indexOf(',') - 1) * 0.75 > MAX_DRAWN_INITIALS_BYTES)
        return { problem: `must be at most ${MAX_DRAWN_INITIALS_BYTES / 1024} KB: the ${describe(field)}` };
      const image = signatureImageProblem(value);
      return image ? { problem: `${image}: the ${describe(field)}` } : { stored: value };
    }
  }
}

/** Why a required field without a value is not filled, or undefined when it is (or needs nothing from the signer). */
function missingProblem(field: SignerField, stored: string | undefined): string | undefined {
  if (!field.required || isPrefilled(field)) return undefined;
  if (field.type === 'text' && (stored === undefined || !VISIBLE_CHARACTER.test(stored))) return `is required: the ${describe(field)}`;
  if (field.type === 'initials' && stored === undefined) return `is required: the ${describe(field)}`;
  if (field.type === 'checkbox' && stored !== 'true') return `must be true: the ${describe(field)} is required (ticked)`;
  return undefined;
}

/**
 * A signer's field values checked against their fields (keyed by each field's position in the list, as
 * sealing reads them): each given value fits its field's type and is not for a field the sender prefilled
 * (the prefill stands), and each required field has one. Signature fields take the signature and date fields
 * the date of signing, so neither takes a value. Answers every problem, named `fieldValues.<position>`, and
 * the values as stored: checkboxes as 'true' or 'false'.
 */
export async function checkFieldValues(
  fields: SignerField[] | null,
  given: Record<string, string | boolean>,
): Promise<{ problems: string[]; values: Record<string, string> }> {
  const list = fields ?? [];
  const problems: string[] = [];
  const values: Record<string, string> = {};
  for (const key of Object.keys(given)) {
    if (!list[Number(key)]) problems.push(`fieldValues.${key} must name one of your fields: ${list.length ? `0 to ${list.length - 1}` : 'you have none'}`);
  }
  for (const [index, field] of list.entries()) {
    const key = String(index);
    let stored: string | undefined;
    if (Object.hasOwn(given, key)) {
      const checked = await checkValue(field, given[key]);
      if (checked.problem) {
        problems.push(`fieldValues.${key} ${checked.problem}`);
        continue;
      }
      stored = checked.stored;
      if (stored !== undefined) values[key] = stored;
    }
    const missing = missingProblem(field, stored);
    if (missing) problems.push(`fieldValues.${key} ${missing}`);
  }
  return { problems, values };
}
