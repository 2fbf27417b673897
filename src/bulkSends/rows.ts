import { parse } from 'csv-parse/sync';
import { SigningRequestCreateSchema, type SigningRequestCreateInput } from '../signingRequests/schema';
import { templateRequestProblems } from '../signingRequests/fromTemplate';
import type { Template } from '../templates/store';
import { BulkSendRowSchema, type BulkSendRow } from './schema';

// A bulk send's rows: read from JSON or a CSV, each made into the request it becomes, and checked as that request
// would be, so that a job is refused before anything is sent. A problem names its row and key (JSON) or column (CSV).

/** Where a row came from: its problems name JSON paths (rows.3.recipients.tenant.email) or CSV lines and columns. */
export type RowSource = 'json' | 'csv';

/** The columns of a CSV, its first line: <role>.name, <role>.email, prefill.<label>, title, message, expiresInDays, externalId. */
const PLAIN_COLUMNS = ['title', 'message', 'expiresInDays', 'externalId'];

/** What a CSV column holds, by its header: a plain key, a prefill's label, or a role's name or e-mail; nothing else is read. */
type Column = { plain: string } | { prefill: string } | { role: string; key: string };

function columnOf(header: string): Column | undefined {
  if (PLAIN_COLUMNS.includes(header)) return { plain: header };
  const prefill = /^prefill\.(.+)$/.exec(header);
  if (prefill) return { prefill: prefill[1] };
  const recipient = /^(.+)\.(name|email)$/.exec(header);
  return recipient ? { role: recipient[1], key: recipient[2] } : undefined;
}

/**
 * The rows of a CSV (UTF-8, with or without BOM; `,` or `;` between fields; quoted fields; CRLF or LF), as the JSON
 * rows they stand for, or the problems that stop reading it. A prefill is text as written (a checkbox's "true" or
 * "false", a list's options separated by "|", converted by the field's type when the row is checked); an empty cell is
 * no value.
 */
export function rowsOfCsv(text: string): { rows: unknown[]; problems: string[] } {
  let records: string[][];
  try {
    records = parse(text, { bom: true, delimiter: [',', ';'], relax_column_count: false, skip_empty_lines: true, trim: true });
  } catch (error) {
    return { rows: [], problems: [`file is not a CSV that can be read: ${(error as Error).message}`] };
  }
  const [header, ...body] = records;
  if (!header) return { rows: [], problems: ['file must have a header line and at least one row'] };
  const columns = header.map(columnOf);
  const problems = header.flatMap((column, index) =>
    columns[index] ? [] : [`file column ${index + 1} ("${column}") must be <role>.name, <role>.email, prefill.<label>, ${PLAIN_COLUMNS.join(', ')}`],
  );
  const rows = body.map((cells) => {
    const row: Record<string, unknown> & { recipients: Record<string, Record<string, string>>; prefill?: Record<string, string> } = { recipients: {} };
    columns.forEach((column, index) => {
      const cell = cells[index] ?? '';
      if (cell === '' || !column) return;
      if ('plain' in column) row[column.plain] = column.plain === 'expiresInDays' && /^\d+$/.test(cell) ? Number(cell) : cell;
      else if ('prefill' in column) (row.prefill ??= {})[column.prefill] = cell;
      else (row.recipients[column.role] ??= {})[column.key] = cell;
    });
    return row;
  });
  return { rows, problems };
}

/** A CSV's prefill text as its field takes it: a checkbox's true or false, a list's options split on "|". */
function prefillOfCsv(template: Template, prefill: NonNullable<BulkSendRow['prefill']>): NonNullable<BulkSendRow['prefill']> {
  return Object.fromEntries(
    Object.entries(prefill).map(([label, value]) => {
      const type = template.fields.find((field) => field.label === label)?.type;
      if (typeof value !== 'string') return [label, value];
      if (type === 'checkbox' && (value === 'true' || value === 'false')) return [label, value === 'true'];
      if (type === 'multiSelect' || type === 'checkboxGroup') return [label, value.split('|').map((option) => option.trim())];
      return [label, value];
    }),
  );
}

/** The request a row becomes: the template's roles in order, each with the row's recipient. */
export function requestBodyOf(template: Template, row: BulkSendRow): Record<string, unknown> {
  return {
    template_id: template.id,
    title: row.title ?? template.name,
    ...(row.message === undefined ? {} : { message: row.message }),
    ...(row.expiresInDays === undefined ? {} : { expiresInDays: row.expiresInDays }),
    ...(row.prefill === undefined ? {} : { prefill: row.prefill }),
    signers: template.roles.map((role) => ({ role: role.name, ...row.recipients[role.name] })),
  };
}

/** A checked row, as JSON takes it (a CSV's prefill converted: it is kept and sent as JSON), and the request it becomes; or its problems as "<where> <problem>". */
export type CheckedRow = { row: BulkSendRow; request: SigningRequestCreateInput; problems?: undefined } | { problems: string[] };

/** How a problem names its place: rows.3.recipients.tenant.email (JSON), or row 3, column tenant.email (CSV: row 1 is the line after the header). */
function placeOf(source: RowSource, index: number, path: string) {
  if (source === 'json') return `rows.${index}${path ? `.${path}` : ''}`;
  return `row ${index + 1}${path ? `, column ${path.replace(/^recipients\./, '')}` : ''}:`;
}

/** A row checked as the request it becomes: its own shape, the roles it names, and what the request's schema and the template say of it. */
export function checkRow(template: Template, given: unknown, index: number, source: RowSource): CheckedRow {
  const at = (path: string, problem: string) => `${placeOf(source, index, path)} ${problem}`;
  const shaped = BulkSendRowSchema.safeParse(given);
  if (!shaped.success) return { problems: shaped.error.issues.map((issue) => at(issue.path.join('.'), issue.message)) };
  const row = source === 'csv' && shaped.data.prefill ? { ...shaped.data, prefill: prefillOfCsv(template, shaped.data.prefill) } : shaped.data;
  const roles = template.roles.map((role) => role.name);
  const problems = Object.keys(row.recipients)
    .filter((role) => !roles.includes(role))
    .map((role) => at(`recipients.${role}`, `names no role of the template (its roles: ${roles.join(', ')})`));
  // The request's own words name its signers by position: here each is its role's recipient.
  const inRow = (path: string) => path.replace(/^signers\.(\d+)/, (_, position: string) => `recipients.${roles[Number(position)]}`);
  const parsed = SigningRequestCreateSchema.safeParse(requestBodyOf(template, row));
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = inRow(issue.path.join('.'));
      problems.push(at(path === 'signers' ? 'recipients' : path, issue.message));
    }
    return { problems };
  }
  for (const problem of templateRequestProblems(template, parsed.data)) {
    const [path, ...words] = problem.split(' ');
    problems.push(at(inRow(path), words.join(' ')));
  }
  return problems.length ? { problems } : { row, request: parsed.data };
}
