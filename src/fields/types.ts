// The kinds of field a request or template places on a document's pages.
/** The kinds of field that make up a signer's form (src/fields/form.ts): all but signature, initials and date. */
export const formFieldTypes = [
  'text',
  'checkbox',
  'number',
  'email',
  'phone',
  'radio',
  'dropdown',
  'multiSelect',
  'checkboxGroup',
  'calculated',
  'signerName',
  'signerEmail',
  'staticText',
  'image',
  'attachment',
] as const;
/** The kinds the signer chooses from options; the last two hold several, stored as a JSON list. */
export const optionFieldTypes = ['radio', 'dropdown', 'multiSelect', 'checkboxGroup'] as const;
export const selectionFieldTypes = ['multiSelect', 'checkboxGroup'] as const;
/** The kinds the signer fills with a file they upload first (POST /sign/{token}/uploads): its upload's id. */
export const uploadFieldTypes = ['image', 'attachment'] as const;
/** The kinds whose value the signer gives and rules check (src/fields/rules.ts). */
export const ruledFieldTypes = ['text', 'number', 'email', 'phone', ...optionFieldTypes, ...uploadFieldTypes] as const;
/** The kinds of field a request or template places. */
export const fieldTypes = ['signature', 'initials', 'date', ...formFieldTypes] as const;
export type FieldType = (typeof fieldTypes)[number];
