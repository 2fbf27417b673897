import { fieldTypes } from '../templates/schema';
import { html } from './html';

// The controls of a new field, shared by the template editor (templates.ts) and the send form
// (requestPages.ts); assets/fieldPlacement.js draws the fields and makes each one's row.

/** The <option>s of a field's type: for the new field's type, and the <template> each row's type copies. */
export const fieldTypeOptions = () => fieldTypes.map((type) => html`<option value="${type}">${type}</option>`);

/**
 * A new field's position typed in (the keyboard's way, and a phone's): page, x, y, width and height in PDF
 * points, which the browser checks against their bounds; `form` when the inputs sit inside another form.
 */
export function positionInputs({ pageCount, form }: { pageCount?: number; form?: string } = {}) {
  const number = (id: string, label: string, attributes: { min: number; max?: number; step?: string; value: number }) =>
    html`<div><label for="${id}">${label}</label><input id="${id}"${form ? html` form="${form}"` : ''} type="number" inputmode="decimal" required min="${attributes.min}"${attributes.max ? html` max="${attributes.max}"` : ''} step="${attributes.step ?? 'any'}" value="${attributes.value}"></div>`;
  return html`<div class="field-grid position-grid">
          ${number('new-page', 'Page', { min: 1, max: pageCount, step: '1', value: 1 })}
          ${number('new-x', 'X', { min: 0, value: 72 })}
          ${number('new-y', 'Y', { min: 0, value: 72 })}
          ${number('new-width', 'Width', { min: 1, value: 180 })}
          ${number('new-height', 'Height', { min: 1, value: 36 })}
        </div>`;
}
