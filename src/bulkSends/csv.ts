import fs from 'node:fs/promises';
import type { File } from 'formidable';
import type { Context } from 'koa';
import { receivedFileOf } from '../api/middleware/body';
import { idParam } from '../api/route';
import { parseInput, textProblems, z } from '../api/validation';
import { validationError } from '../errors';
import { PREFILLABLE } from '../signingRequests/fromTemplate';
import type { Template } from '../templates/store';
import { rowsOfCsv } from './rows';
import { MAX_BULK_ROWS } from './schema';

// A bulk send's CSV: an upload read into rows (the REST API's and the console's), and the columns a template's CSV has.

/** A CSV of 10,000 rows of a few recipients each fits easily. */
export const MAX_CSV_BYTES = 10 * 1024 * 1024;

export const CsvUploadSchema = z
  .object({
    templateId: idParam('template', 'Template'),
    dryRun: z.enum(['true', 'false']).default('false'),
    file: z.string().openapi({
      format: 'binary',
      description: 'The CSV: a header line of <role>.name, <role>.email, prefill.<label>, title, message, expiresInDays, externalId; one row a line.',
    }),
  })
  .openapi('BulkSendCsvUpload');

/**
 * The job a multipart CSV upload asks for: its rows read into JSON rows, with the problems of reading them
 * (reported once the template is found, with the rows' own).
 */
export async function csvJobOf(ctx: Context): Promise<{ templateId: string; rows: unknown[]; dryRun: boolean; source: 'csv'; problems: string[] }> {
  const fields = parseInput(CsvUploadSchema.omit({ file: true }), ctx.request.body ?? {});
  const part = ctx.request.files?.file;
  const file = (Array.isArray(part) ? part[0] : part) as File | undefined;
  if (!file) throw validationError(['file is required: the CSV as the file part of multipart/form-data']);
  const received = receivedFileOf(file);
  const bytes = received.bytes ?? (await fs.readFile(received.path!));
  const { rows, problems } = rowsOfCsv(new TextDecoder('utf-8', { fatal: false }).decode(bytes));
  if (rows.length > MAX_BULK_ROWS) problems.push(`file must have at most ${MAX_BULK_ROWS} rows (it has ${rows.length})`);
  else if (rows.length === 0 && problems.length === 0) problems.push('file must have at least one row after its header line');
  // Text that cannot be stored is one more problem of the file, told once the template is found.
  problems.push(...textProblems(rows).map((problem) => `file row ${problem}`));
  return { templateId: fields.templateId, rows, dryRun: fields.dryRun === 'true', source: 'csv', problems };
}

/** The fields a row may prefill: one per label, of a type a sender may fill. */
export const prefillableFieldsOf = (template: Template) =>
  template.fields.filter(
    (field, index, all) => field.label !== null && PREFILLABLE.includes(field.type) && all.findIndex((other) => other.label === field.label) === index,
  );

/** The header a template's CSV has: each role's name and e-mail, each prefillable field, then the optional columns. */
export const csvColumnsOf = (template: Template) => [
  ...template.roles.flatMap((role) => [`${role.name}.name`, `${role.name}.email`]),
  ...prefillableFieldsOf(template).map((field) => `prefill.${field.label}`),
  'title',
  'message',
  'expiresInDays',
  'externalId',
];

const csvCell = (text: string) => (/[",;\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

/** A CSV to start from: the header and one example row (empty cells are no value). */
export function sampleCsvOf(template: Template): string {
  const columns = csvColumnsOf(template);
  const example = columns.map((column) => {
    const role = template.roles.findIndex((candidate) => column === `${candidate.name}.name` || column === `${candidate.name}.email`);
    if (role >= 0) return column.endsWith('.email') ? `person${role + 1}@example.com` : `Example ${template.roles[role].name}`;
    return column === 'externalId' ? 'row-1' : '';
  });
  return [columns, example].map((cells) => cells.map(csvCell).join(',')).join('\r\n') + '\r\n';
}
