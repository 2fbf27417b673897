import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream/promises';
import formidable, { multipart, type File } from 'formidable';
import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { payloadTooLarge, unsupportedMediaType, validationError } from '../../errors';
import { ReceivedFileWriter, receivedFromBytes, type ReceivedFile } from '../receivedFile';

// Base64 makes a file 4/3 larger; JSON bodies may carry one file of up to maxFileBytes plus its fields.
const jsonLimitFor = (maxFileBytes: number) => Math.ceil((maxFileBytes * 4) / 3) + 64 * 1024;

/** A client gone before its whole body arrived: the error raw-body gives, which requestContext answers 400 request_aborted. */
const requestAborted = () => Object.assign(new Error('request aborted'), { type: 'request.aborted' });

/**
 * Reads the request's body with `read`, failing with request_aborted if the client is gone before the
 * body has ended: already (it hung up while the request waited for its account's quota or an upload
 * slot), or while it is read. A closed request emits no more events, so a reader that starts on one, or
 * that waits for an end that never comes, would wait forever, and with it whatever the request holds (an
 * upload slot among them). Every reader of a request body goes through here.
 */
export async function readWhileConnected<T>(req: IncomingMessage, read: () => Promise<T>): Promise<T> {
  if (req.destroyed && !req.readableEnded) throw requestAborted();
  let closed = () => {};
  const gone = new Promise<never>((_, reject) => (closed = () => reject(requestAborted())));
  gone.catch(() => undefined); // when the reader has settled first
  const onClose = () => req.readableEnded || closed();
  req.once('close', onClose);
  let result: T;
  try {
    result = await Promise.race([read(), gone]);
  } finally {
    req.off('close', onClose);
  }
  const hook = bodyReadHooks.get(req);
  bodyReadHooks.delete(req);
  await hook?.();
  return result;
}

const bodyReadHooks = new WeakMap<IncomingMessage, () => Promise<void>>();

/**
 * Runs `hook` once a reader has read the request's whole body, before the reader's caller goes on to act
 * on it: the Idempotency-Key's holder records the body's hash there, before the request can commit.
 */
export const afterBodyRead = (req: IncomingMessage, hook: () => Promise<void>) => void bodyReadHooks.set(req, hook);

/** A body parser (koa-body's) as a middleware that reads through readWhileConnected; the handlers after it run outside. */
export const readingWhileConnected =
  (parse: Middleware): Middleware =>
  async (ctx, next) => {
    await readWhileConnected(ctx.req, () => parse(ctx, async () => {}));
    await next();
  };

/** JSON bodies only; anything else with a body is a 415. */
export function jsonBody(maxFileBytes = 0): Middleware {
  const parse = readingWhileConnected(
    koaBody({ json: true, text: false, urlencoded: false, multipart: false, jsonLimit: jsonLimitFor(maxFileBytes) || '1mb' }),
  );
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
  _transform(chunk: Buffer, encoding: BufferEncoding, done: (error?: Error | null) => void): void;
}

/** Part data shorter than this is copied, with the short part data around it, into a piece of PIECE_BYTES. */
const SHORT_PART_DATA_BYTES = 4096;
const PIECE_BYTES = 64 * 1024;
/**
 * A body may be cut into this many short pieces of part data, plus one per BYTES_PER_SHORT_PIECE bytes of
 * it. The parser cuts at each CR in the data and at each false lead: a compressed PDF has a CR every 256
 * bytes or so, a text with CRLF lines two pieces a line (a PDF's xref table, 10 bytes a piece); a body of
 * CRs alone (a piece a byte) cost the parser some 0.8 s of CPU a MiB even joined (formidable's own loop).
 */
const FREE_SHORT_PIECES = 65_536;
// One per 2 bytes: a real file is refused only if its CRLF lines average under 4 bytes (an uncompressed
// content stream of text operators averages about 8); the worst body accepted costs the parser some
// 0.4 s a MiB, 10 s for the largest upload, of which MAX_CONCURRENT_UPLOADS run at once.
const BYTES_PER_SHORT_PIECE = 2;

const tooManyPieces = (pieces: number, bytes: number) =>
  validationError([
    `file: the multipart body is cut into too many pieces (${pieces} in its first ${bytes} bytes, at most ${FREE_SHORT_PIECES} and one per ${BYTES_PER_SHORT_PIECE} bytes): its data holds CR, the beginning of its boundary, that often; send the file with Content-Type: application/pdf instead`,
  ]);

/**
 * formidable's multipart plugin, except that short part data goes on copied and joined with its
 * neighbours. The parser hands on part data up to each CR in it, and the bytes of a false lead (data that
 * began like the delimiter, CRLF "--" boundary, and was not it) as a view of its one lookbehind buffer,
 * which it overwrites at the next false lead. A body stuffed with lookalikes ("\r\n-x" over and over) was
 * one event per few bytes: formidable paused and resumed the request and wrote the file once per event
 * (seconds of CPU per MiB), and the file writer kept a buffer per event (the whole delimiter followed by
 * neither CRLF nor "--" was even stored as other bytes than were sent). Now the bytes of a false lead and
 * other short part data are copied into a piece, handed on as one event when a longer stretch of data or
 * another event comes, the piece is full, or the chunk of the body ends; longer part data goes on as the
 * parser gives it, uncopied, so a body is still held once.
 */
const multipartJoiningShortData: formidable.PluginFunction = (form, options) => {
  multipart.call(form, form, options);
  const parser = (form as unknown as { _parser?: MultipartParserInternals })._parser;
  if (!parser?.lookbehind) return;
  const refusing = form as unknown as { error?: unknown; _error(error: Error): void };
  const handleCallback = parser._handleCallback.bind(parser);
  const transform = parser._transform.bind(parser);
  let piece = Buffer.alloc(0);
  let used = 0;
  let handedOn = 0;
  let parsedBytes = 0;
  let shortPieces = 0;
  const handOn = () => {
    if (used > handedOn) handleCallback('partData', piece, handedOn, used);
    handedOn = used;
  };
  parser._handleCallback = (name, buffer, start, end) => {
    if (name !== 'partData' || !buffer || start === undefined || end === undefined) {
      handOn();
      return handleCallback(name, buffer, start, end);
    }
    const length = end - start;
    if (length <= 0) return;
    if (length >= SHORT_PART_DATA_BYTES && buffer !== parser.lookbehind) {
      handOn();
      return handleCallback(name, buffer, start, end);
    }
    shortPieces += 1;
    if (refusing.error) return;
    if (shortPieces > FREE_SHORT_PIECES + parsedBytes / BYTES_PER_SHORT_PIECE) {
      // Refused: formidable parses no more of the body (the rest of the chunk in hand goes unkept).
      refusing._error(tooManyPieces(shortPieces, parsedBytes));
      return;
    }
    if (length > piece.length - used) {
      handOn();
      piece = Buffer.allocUnsafeSlow(Math.max(PIECE_BYTES, length));
      used = handedOn = 0;
    }
    buffer.copy(piece, used, start, end);
    used += length;
  };
  parser._transform = (chunk, encoding, done) => {
    parsedBytes += chunk.length;
    transform(chunk, encoding, (error) => {
      handOn();
      done(error);
    });
  };
};

/**
 * JSON or multipart/form-data. A file part is counted and hashed as it arrives, and kept in memory up to
 * 1 MiB, in a temporary file in `uploadDir` beyond (read it with `receivedFileOf`): the api never holds a
 * large body, and the temporary file is removed when the request ends, however it ends. A part is a
 * file when it has a Content-Type, a filename, or the name `fileField`: not every client gives a file
 * part its own Content-Type, and formidable alone would take such a part for a text field. Without an
 * `uploadDir` the file stays in memory (at most maxFileBytes): never written anywhere.
 */
export function jsonOrMultipartBody(maxFileBytes: number, fileField: string, uploadDir: string | undefined): Middleware {
  const parseJson = readingWhileConnected(koaBody({ json: true, text: false, urlencoded: false, multipart: false, jsonLimit: jsonLimitFor(maxFileBytes) }));
  const options = {
    maxFileSize: maxFileBytes,
    maxTotalFileSize: maxFileBytes,
    maxFiles: 1,
    maxFields: MAX_FORM_FIELDS,
    allowEmptyFiles: true,
    minFileSize: 0,
    // Only multipart bodies come here: formidable's other parsers need not look at each one.
    enabledPlugins: [multipartJoiningShortData],
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
      const [fields, files] = await readWhileConnected(ctx.req, () => form.parse(ctx.req));
      ctx.request.body = singleOrMany(fields);
      ctx.request.files = singleOrMany(files);
      await next();
    } finally {
      await Promise.all(writers.map((writer) => writer.discard()));
    }
  };
}

/**
 * The raw body of a PDF upload (Content-Type application/pdf), refusing anything over the limit (before
 * reading it, when its Content-Length says so), received as jsonOrMultipartBody receives a file part
 * (in memory only without an `uploadDir`); `use` gets it, and its temporary file is removed once `use` is done.
 */
export async function withPdfBody<T>(ctx: Context, maxFileBytes: number, uploadDir: string | undefined, use: (file: ReceivedFile) => Promise<T>): Promise<T> {
  if (!ctx.is('application/pdf', 'application/octet-stream')) {
    throw unsupportedMediaType('Send the PDF bytes with Content-Type: application/pdf.');
  }
  const declared = Number(ctx.get('Content-Length'));
  if (declared > maxFileBytes) throw payloadTooLarge(maxFileBytes);
  const writer = new ReceivedFileWriter(uploadDir);
  try {
    await readWhileConnected(ctx.req, () => receive(ctx.req, writer, maxFileBytes));
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
