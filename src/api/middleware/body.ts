import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream/promises';
import formidable, { multipart, type File } from 'formidable';
import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { payloadTooLarge, unsupportedMediaType } from '../../errors';
import { ReceivedFileWriter, receivedFromBytes, type ReceivedFile } from '../receivedFile';

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

const receivedFiles = new WeakMap<object, ReceivedFileWriter>();

/** The file part read by jsonOrMultipartBody, as it arrived. */
export const receivedFileOf = (file: File): ReceivedFile => receivedFiles.get(file)?.received ?? receivedFromBytes(Buffer.alloc(0));

/** The fields and files of a multipart body, as koa-body gives them: one value, or an array of several. */
const singleOrMany = <T>(values: Record<string, T[] | undefined>): Record<string, T | T[]> =>
  Object.fromEntries(Object.entries(values).flatMap(([key, value]) => (value === undefined ? [] : [[key, value.length === 1 ? value[0] : value]])));

/** What formidable's MultipartParser hands its events to, and the buffer it keeps a possible delimiter in. */
interface MultipartParserInternals {
  lookbehind: Buffer;
  _handleCallback(name: string, buffer?: Buffer, start?: number, end?: number): void;
}

/**
 * formidable's multipart plugin, except that the bytes of a false lead (part data that began like the
 * delimiter, CRLF "--" boundary, and was not it) go on as a copy. The parser hands them on as a view of
 * its one lookbehind buffer and overwrites it at the next false lead, while a ReceivedFileWriter keeps
 * (and, behind a write in progress, hashes) what it is given later: the whole delimiter followed by
 * neither CRLF nor "--" was stored, and hashed, as other bytes than were sent. A copy is at most the
 * boundary and 5 bytes, one per false lead; other part data is never copied.
 */
const multipartCopyingFalseLeads: formidable.PluginFunction = (form, options) => {
  multipart.call(form, form, options);
  const parser = (form as unknown as { _parser?: MultipartParserInternals })._parser;
  if (!parser?.lookbehind) return;
  const handleCallback = parser._handleCallback.bind(parser);
  parser._handleCallback = (name, buffer, start, end) => {
    if (buffer !== parser.lookbehind) return handleCallback(name, buffer, start, end);
    const copy = Buffer.from(buffer.subarray(start, end));
    handleCallback(name, copy, 0, copy.length);
  };
};

/**
 * JSON or multipart/form-data. A file part is counted and hashed as it arrives, and kept in memory up to
 * 1 MiB, in a temporary file in `uploadDir` beyond (read it with `receivedFileOf`): the api never holds a
 * large body, and the temporary file is removed when the request ends, however it ends. A part is a
 * file when it has a Content-Type, a filename, or the name `fileField`: not every client gives a file
 * part its own Content-Type, and formidable alone would take such a part for a text field.
 */
export function jsonOrMultipartBody(maxFileBytes: number, fileField: string, uploadDir: string): Middleware {
  const parseJson = koaBody({ json: true, text: false, urlencoded: false, multipart: false, jsonLimit: jsonLimitFor(maxFileBytes) });
  const options = {
    maxFileSize: maxFileBytes,
    maxTotalFileSize: maxFileBytes,
    maxFiles: 1,
    maxFields: MAX_FORM_FIELDS,
    allowEmptyFiles: true,
    minFileSize: 0,
    // Only multipart bodies come here: formidable's other parsers need not look at each one.
    enabledPlugins: [multipartCopyingFalseLeads],
    // The file goes to a ReceivedFileWriter, never to a path of formidable's: no random name to draw (cuid2, a SHA-3 per file).
    filename: () => 'upload',
  };
  return async (ctx, next) => {
    // No body at all is a missing field (400), as on every JSON endpoint; a body of another type is 415.
    if ((ctx.request.length || ctx.get('Transfer-Encoding')) && !ctx.is('application/json', 'multipart/form-data')) {
      throw unsupportedMediaType('Send JSON (application/json) or a multipart/form-data upload with a file part.');
    }
    if (!ctx.is('multipart/form-data')) return parseJson(ctx, next);
    const writers: ReceivedFileWriter[] = [];
    const form = formidable({
      ...options,
      multiples: true,
      fileWriteStreamHandler: (file) => {
        const writer = new ReceivedFileWriter(uploadDir);
        writers.push(writer);
        if (file) receivedFiles.set(file, writer);
        return writer;
      },
    });
    const handlePart = form._handlePart.bind(form);
    form.onPart = (part) => {
      if (!part.mimetype && (part.originalFilename !== null || part.name === fileField)) part.mimetype = 'application/octet-stream';
      return handlePart(part);
    };
    try {
      const [fields, files] = await form.parse(ctx.req);
      ctx.request.body = singleOrMany(fields);
      ctx.request.files = singleOrMany(files);
      await next();
    } finally {
      await Promise.all(writers.map((writer) => writer.discard()));
    }
  };
}

/** A client gone before its whole body arrived: the error raw-body gives, which requestContext answers 400 request_aborted. */
const requestAborted = () => Object.assign(new Error('request aborted'), { type: 'request.aborted' });

/**
 * The raw body of a PDF upload (Content-Type application/pdf), refusing anything over the limit (before
 * reading it, when its Content-Length says so), received as jsonOrMultipartBody receives a file part;
 * `use` gets it, and its temporary file is removed once `use` is done.
 */
export async function withPdfBody<T>(ctx: Context, maxFileBytes: number, uploadDir: string, use: (file: ReceivedFile) => Promise<T>): Promise<T> {
  if (!ctx.is('application/pdf', 'application/octet-stream')) {
    throw unsupportedMediaType('Send the PDF bytes with Content-Type: application/pdf.');
  }
  const declared = Number(ctx.get('Content-Length'));
  if (declared > maxFileBytes) throw payloadTooLarge(maxFileBytes);
  const writer = new ReceivedFileWriter(uploadDir);
  try {
    await receive(ctx.req, writer, maxFileBytes);
    return await use(writer.received!);
  } finally {
    await writer.discard();
  }
}

/** Reads `req` into `writer`, at most `maxBytes`, without destroying `req` on a refusal: the answer still goes out on its connection. */
async function receive(req: IncomingMessage, writer: ReceivedFileWriter, maxBytes: number) {
  let received = 0;
  for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > maxBytes) throw payloadTooLarge(maxBytes);
    if (!writer.write(chunk)) await once(writer, 'drain');
  }
  if (!req.complete) throw requestAborted();
  writer.end();
  await finished(writer);
}
