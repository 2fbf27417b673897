import fs from 'node:fs/promises';
import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import { conflict, notFound, validationError } from '../errors';
import { uploadFieldTypes } from '../fields/types';
import { storedUploadOf, type UploadedFile } from '../fields/uploads';
import { newId } from '../ids';
import type { PdfInspector } from '../pdf/inspect';
import { checkSignerFile, MAX_SIGNER_FILE_BYTES, type SignerFileInput, type SignerFileType } from '../pdf/signerFile';
import { assertCanAct, type SigningContext } from './links';

// The files a signer uploads for their image and attachment fields: each checked, stored with its SHA-256, and
// named by its id in the signer's field values. Unreferenced ones stay with the request, bounded per signer.

/** Per signer, so that one link cannot fill the database: files, and bytes in all. */
export const MAX_UPLOADS_PER_SIGNER = 20;
export const MAX_UPLOAD_BYTES_PER_SIGNER = 50 * 1024 * 1024;
/** Longest file name kept, in characters. */
const MAX_FILE_NAME = 200;

export type SignerUpload = UploadedFile & { contentType: SignerFileType };

const UPLOAD_COLUMNS = ['id', 'file_name', 'content_type', 'size', 'sha256'] as const;
type UploadRow = { id: string; file_name: string; content_type: SignerFileType; size: number; sha256: string };
const uploadOf = (row: UploadRow): SignerUpload => ({ id: row.id, fileName: row.file_name, contentType: row.content_type, size: row.size, sha256: row.sha256 });

const UNSAFE_NAME = /[\p{Cc}\p{Cf}\\/:*?"<>|]/gu;

/** The name to keep: its last path segment, without control, format or path characters, at most MAX_FILE_NAME characters. */
export function storableFileName(name: string | null | undefined, type: SignerFileType): string {
  const base = (name ?? '').toWellFormed().split(/[\\/]/).pop()!.replace(UNSAFE_NAME, '').trim();
  const kept = [...base].slice(0, MAX_FILE_NAME).join('');
  return kept || `upload.${type === 'application/pdf' ? 'pdf' : type === 'image/png' ? 'png' : 'jpg'}`;
}

/**
 * Stores a file the signer of `context` uploads, once it passed the checks of uploads (src/pdf/signerFile.ts): while
 * they may act, when they have an image or attachment field, within the limits per signer (counted under a lock on
 * the signer's row, so that uploads at the same moment cannot pass them together).
 */
export async function receiveSignerUpload(
  db: Db,
  pdf: PdfInspector,
  context: SigningContext,
  file: SignerFileInput & { size: number },
  fileName?: string | null,
) {
  assertCanAct(context);
  const { signer } = context;
  if (!signer.fields?.some((field) => (uploadFieldTypes as readonly string[]).includes(field.type))) {
    throw conflict('You have no image or attachment field to upload a file for.');
  }
  if (file.size === 0) throw validationError(['file must not be empty']);
  if (file.size > MAX_SIGNER_FILE_BYTES) throw validationError([`file must be at most ${MAX_SIGNER_FILE_BYTES / 1024 / 1024} MB`]);
  const checked = await checkSignerFile(pdf, file);
  if ('problem' in checked) throw validationError([`file ${checked.problem}`]);
  const content = file.bytes ?? (await fs.readFile(file.path!));
  const upload: SignerUpload = {
    id: newId('upload'),
    fileName: storableFileName(fileName, checked.type),
    contentType: checked.type,
    size: file.size,
    sha256: file.sha256,
  };
  await unitOfWork(db, async (trx) => {
    await trx('signers').where({ id: signer.id }).forNoKeyUpdate().first('id');
    const [{ count, bytes }] = await trx('signer_uploads')
      .where({ signer_id: signer.id })
      .select(trx.raw('count(*)::int as count'), trx.raw('coalesce(sum(size), 0)::bigint as bytes'));
    if (count >= MAX_UPLOADS_PER_SIGNER) throw conflict(`You have uploaded ${MAX_UPLOADS_PER_SIGNER} files for this request, the most there may be.`);
    if (Number(bytes) + file.size > MAX_UPLOAD_BYTES_PER_SIGNER) {
      throw conflict(`Your files for this request would pass ${MAX_UPLOAD_BYTES_PER_SIGNER / 1024 / 1024} MB in all.`);
    }
    await trx('signer_uploads').insert({
      id: upload.id,
      signer_id: signer.id,
      signing_request_id: context.request.id,
      file_name: upload.fileName,
      content_type: upload.contentType,
      size: upload.size,
      sha256: upload.sha256,
      content,
    });
  });
  return upload;
}

/** The signer's uploads among `ids`, by id. */
export async function findSignerUploads(db: Db, signerId: string, ids: string[]): Promise<Map<string, SignerUpload>> {
  if (ids.length === 0) return new Map();
  const rows: UploadRow[] = await db('signer_uploads').where({ signer_id: signerId }).whereIn('id', ids).select(UPLOAD_COLUMNS);
  return new Map(rows.map((row) => [row.id, uploadOf(row)]));
}

/** The bytes of uploads, by id, for sealing. */
export async function findUploadContents(db: Db, requestId: string, ids: string[]): Promise<Map<string, Buffer>> {
  if (ids.length === 0) return new Map();
  const rows: { id: string; content: Buffer }[] = await db('signer_uploads')
    .where({ signing_request_id: requestId })
    .whereIn('id', ids)
    .select('id', 'content');
  return new Map(rows.map((row) => [row.id, row.content]));
}

/** One upload of one of the account's requests, with its bytes: 404 for another account's, or one no signed field names. */
export async function findRequestUpload(db: Db, accountId: string, requestId: string, uploadId: string) {
  const row: (UploadRow & { content: Buffer; field_values: Record<string, string> | null }) | undefined = await db('signer_uploads as u')
    .join('signing_requests as r', 'r.id', 'u.signing_request_id')
    .join('signers as s', 's.id', 'u.signer_id')
    .where({ 'u.id': uploadId, 'u.signing_request_id': requestId, 'r.account_id': accountId })
    .first(...UPLOAD_COLUMNS.map((column) => `u.${column}`), 'u.content', db.raw(`s.signature -> 'fieldValues' as field_values`));
  // Only a file a signed field holds is the signer's answer; a file chosen and then replaced is not.
  if (!row || !Object.values(row.field_values ?? {}).some((value) => uploadIdOf(value) === uploadId)) throw notFound('Upload');
  return { upload: uploadOf(row), content: row.content };
}

const uploadIdOf = (value: string) => storedUploadOf(value)?.id;
