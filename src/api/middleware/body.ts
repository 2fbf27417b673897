import { Writable } from 'node:stream';
import type { File } from 'formidable';
import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import getRawBody from 'raw-body';
import { payloadTooLarge, unsupportedMediaType } from '../../errors';

// Base64 makes a file 4/3 larger; JSON bodies may carry one file of up to maxFileBytes plus its fields.
const jsonLimitFor = (maxFileBytes: number) => Math.ceil((maxFileBytes * 4) / 3) + 64 * 1024;

/** JSON bodies only; anything else with a body is a 415. */
export function jsonBody(maxFileBytes = 0): Middleware {
  const parse = koaBody({ json: true, text: false, urlencoded: false, multipart: false, jsonLimit: jsonLimitFor(maxFileBytes) || '1mb' });
  return async (ctx, next) => {
    if (ctx.request.length && !ctx.is('application/json')) {
      throw unsupportedMediaType('Send a JSON body with Content-Type: application/json.');
    }
    await parse(ctx, next);
  };
}

export const MAX_FORM_FIELDS = 20;

const fileContents = new WeakMap<object, Buffer>();

/** The bytes of a file part read by jsonOrMultipartBody. */
export const contentOf = (file: File): Buffer => fileContents.get(file) ?? Buffer.alloc(0);

/**
 * JSON or multipart/form-data. A file part is kept in memory (read it with `contentOf`): the service
 * needs it whole anyway, and a temporary file only added its writes, reads and removal to every upload;
 * MAX_CONCURRENT_UPLOADS bounds how many large ones are read at once. A part is a file when it has a
 * Content-Type, a filename, or the name `fileField`: not every client gives a file part its own
 * Content-Type, and formidable alone would take such a part for a text field.
 */
export function jsonOrMultipartBody(maxFileBytes: number, fileField: string): Middleware {
  const parse = koaBody({
    json: true,
    text: false,
    urlencoded: false,
    multipart: true,
    jsonLimit: jsonLimitFor(maxFileBytes),
    formidable: {
      maxFileSize: maxFileBytes,
      maxTotalFileSize: maxFileBytes,
      maxFiles: 1,
      maxFields: MAX_FORM_FIELDS,
      allowEmptyFiles: true,
      minFileSize: 0,
      onPart: (part, handlePart) => {
        if (!part.mimetype && (part.originalFilename !== null || part.name === fileField)) part.mimetype = 'application/octet-stream';
        handlePart(part);
      },
      fileWriteStreamHandler: (file) => {
        const chunks: Buffer[] = [];
        return new Writable({
          write(chunk: Buffer, _encoding, done) {
            chunks.push(chunk);
            done();
          },
          final(done) {
            if (file) fileContents.set(file, Buffer.concat(chunks));
            done();
          },
        });
      },
    },
  });
  return async (ctx, next) => {
    // No body at all is a missing field (400), as on every JSON endpoint; a body of another type is 415.
    if ((ctx.request.length || ctx.get('Transfer-Encoding')) && !ctx.is('application/json', 'multipart/form-data')) {
      throw unsupportedMediaType('Send JSON (application/json) or a multipart/form-data upload with a file part.');
    }
    await parse(ctx, next);
  };
}

/** The whole raw body of a PDF upload, refusing anything over the limit before reading it all. */
export async function readPdfBody(ctx: Context, maxFileBytes: number): Promise<Buffer> {
  if (!ctx.is('application/pdf', 'application/octet-stream')) {
    throw unsupportedMediaType('Send the PDF bytes with Content-Type: application/pdf.');
  }
  const declared = Number(ctx.get('Content-Length'));
  if (declared > maxFileBytes) throw payloadTooLarge(maxFileBytes);
  return getRawBody(ctx.req, { length: ctx.get('Content-Length') || undefined, limit: maxFileBytes });
}
