import { VISIBLE_CHARACTER } from '../api/validation';
import { undrawableTextProblem } from '../pdf/drawableText';
import { signatureImageProblem } from '../pdf/signatureImage';
import type { SignerField } from '../documents/fields';
import { formOf, isFormField, MAX_TEXT_VALUE } from '../documents/form';
import { fillForm, type FormSigner } from '../fields/form';
import { uploadFieldTypes } from '../fields/types';
import { storedUpload, type UploadedFile } from '../fields/uploads';

export { MAX_TEXT_VALUE };
/** Longest typed initials, in characters. */
export const MAX_TYPED_INITIALS = 20;
/** Drawn initials: a PNG data URL of at most 256 KB (sent once per initials field). */
export const MAX_DRAWN_INITIALS_BYTES = 256 * 1024;

const PNG_DATA_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/;
const characters = (value: string) => [...value].length;

/** "text field "rent" on page 1": how a problem names a field. */
const describe = (field: SignerField) => `${field.type} field${field.label ? ` "${field.label}"` : ''} on page ${field.page}`;

const isPrefilled = (field: SignerField) => field.value !== undefined && field.value !== null;

/** What a signer may send for a field: text, true or false, a number, or a list of options. */
export type GivenValue = string | boolean | number | string[];

/** Text as stored, or why the sealed PDF could not show it. */
function drawable(field: SignerField, value: string): { problem?: string; stored?: string } {
  const problem = undrawableTextProblem(value);
  return problem ? { problem: `${problem} (the ${describe(field)})` } : { stored: value };
}

/** Why a value does not fit a signature, date or initials field (a "must …" predicate), or undefined; the value as stored. */
async function checkSignatureValue(field: SignerField, value: GivenValue): Promise<{ problem?: string; stored?: string }> {
  if (field.type === 'signature') return { problem: `must not be given: the ${describe(field)} takes your signature` };
  if (field.type === 'date') return { problem: `must not be given: the ${describe(field)} is filled with the date of signing` };
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

/** The signer's uploads among these ids (src/signingRequests/uploads.ts). */
export type UploadLookup = (ids: string[]) => Promise<Map<string, UploadedFile>>;

const UPLOADED: readonly SignerField['type'][] = uploadFieldTypes;

// The types whose value the signer types, and so may hold what a font cannot draw.
const TYPED: readonly SignerField['type'][] = ['text', 'email'];

/** A signer's field values, checked: the values to store (by position), the positions their conditions hid, and every problem. */
export interface CheckedFieldValues {
  problems: string[];
  values: Record<string, string>;
  hidden: number[];
}

/**
 * A signer's field values checked against their fields (keyed by each field's position in the list, as sealing reads
 * them). Signature fields take the signature and date fields the date of signing, so neither takes a value; initials
 * are drawn or typed. The other fields are one form (src/documents/form.ts): each shown field's value fits its type
 * and rules, a hidden one is dropped and not required, calculated fields and the signer's name and e-mail are filled
 * here, and a field the sender prefilled keeps its value. Answers every problem, named `fieldValues.<position>`, and
 * the values as stored: checkboxes as 'true' or 'false', numbers as plain decimals, lists as JSON.
 */
export async function checkFieldValues(
  fields: SignerField[] | null,
  given: Record<string, GivenValue>,
  signer: FormSigner,
  uploads: UploadLookup = async () => new Map(),
): Promise<CheckedFieldValues> {
  const list = fields ?? [];
  const unknown = Object.keys(given)
    .filter((key) => !list[Number(key)])
    .map((key) => `fieldValues.${key} must name one of your fields: ${list.length ? `0 to ${list.length - 1}` : 'you have none'}`);
  // Each problem with its field's position, so that they are listed in the order of the fields.
  const found: [number, string][] = [];
  const problem = (position: number, text: string) => found.push([position, `fieldValues.${position} ${text}`]);
  const values: Record<string, string> = {};
  const { definitions, positionOf } = formOf(list);
  const keyAt = new Map([...positionOf].map(([key, position]) => [position, key]));
  const formGiven: Record<string, GivenValue> = {};
  for (const [position, field] of list.entries()) {
    const isGiven = Object.hasOwn(given, String(position));
    const value = given[String(position)];
    // The prefill stands, and the form reads it as given.
    if (isPrefilled(field)) {
      if (isGiven) problem(position, `must not be given: the sender prefilled the ${describe(field)}`);
      if (isFormField(field)) formGiven[keyAt.get(position)!] = field.value!;
    } else if (isFormField(field)) {
      if (isGiven) formGiven[keyAt.get(position)!] = value;
    } else if (isGiven) {
      const checked = await checkSignatureValue(field, value);
      if (checked.problem) problem(position, checked.problem);
      else if (checked.stored !== undefined) values[String(position)] = checked.stored;
    } else if (field.type === 'initials' && field.required) problem(position, `is required: the ${describe(field)}`);
  }
  const form = fillForm(definitions, formGiven, signer);
  for (const { field, problem: text } of form.problems) {
    const position = positionOf.get(field!)!;
    // A prefill breaks no rule the signer could mend: it stands as the sender gave it.
    if (!isPrefilled(list[position])) problem(position, `${text} (the ${describe(list[position])})`);
  }
  const uploaded: [number, string][] = [];
  for (const [key, value] of Object.entries(form.values)) {
    const position = positionOf.get(key)!;
    const field = list[position];
    if (isPrefilled(field)) continue;
    if (UPLOADED.includes(field.type)) {
      uploaded.push([position, value]);
      continue;
    }
    const checked = TYPED.includes(field.type) ? drawable(field, value) : { stored: value };
    if (checked.problem) problem(position, checked.problem);
    else values[String(position)] = value;
  }
  const files = await uploads(uploaded.map(([, id]) => id));
  for (const [position, id] of uploaded) {
    const file = files.get(id);
    const field = list[position];
    if (!file) problem(position, `must be the id of a file you uploaded for this request (the ${describe(field)})`);
    else if (field.type === 'image' && !file.contentType.startsWith('image/'))
      problem(position, `must be a PNG or JPEG image, not a PDF (the ${describe(field)})`);
    else values[String(position)] = storedUpload(file);
  }
  found.sort(([a], [b]) => a - b);
  const hidden = form.hidden.map((key) => positionOf.get(key)!).sort((a, b) => a - b);
  return { problems: [...unknown, ...found.map(([, text]) => text)], values, hidden };
}
