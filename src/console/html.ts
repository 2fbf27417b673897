// HTML built from template strings: every interpolated value is escaped unless it is already Html.
export class Html {
  constructor(readonly text: string) {}
  toString() {
    return this.text;
  }
}

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: unknown) => String(value ?? '').replace(/[&<>"']/g, (char) => entities[char]);

type Value = Html | string | number | boolean | null | undefined | Value[];

const render = (value: Value): string => {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
};

/** html`<p>${name}</p>`: values are escaped, arrays joined, null/undefined/false left out. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  return new Html(strings.reduce((out, part, index) => out + part + (index < values.length ? render(values[index]) : ''), ''));
}

/** JSON for a <script type="application/json"> block: nothing in it can close the element. */
export const jsonData = (value: unknown) => new Html(JSON.stringify(value).replace(/</g, '\\u003c'));
