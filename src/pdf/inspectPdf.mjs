// @ts-check
// The child program of the PDF inspector (inspect.ts), run in the pool of pool.ts: is this a whole,
// unencrypted PDF with at least one page, within the limits of argv[2] ({maxPages, maxObjects,
// maxDecompressedBytes}), and what are its pages? Answers {facts} or {problem}. A job brings the PDF's
// bytes, or the path of the api's temporary file holding a large one ({path}), and may ask for its
// signatures too ({signatures: true}, pdfSignatures.mjs: the answer's facts then hold them). Plain
// JavaScript, so that it starts without a TypeScript loader.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import { readSignatures } from './pdfSignatures.mjs';
import { serveJobs } from './serveJobs.mjs';

const require = createRequire(import.meta.url);
const { decodePDFRawStream, PDFArray, PDFContext, PDFDict, PDFName, PDFNumber, PDFParser } = require('pdf-lib');
const ByteStream = require('pdf-lib/cjs/core/parser/ByteStream').default;
const PDFObjectParser = require('pdf-lib/cjs/core/parser/PDFObjectParser').default;
const { IsDelimiter } = require('pdf-lib/cjs/core/syntax/Delimiters');
const { IsWhitespace } = require('pdf-lib/cjs/core/syntax/Whitespace');
/** @typedef {import('pdf-lib').PDFObject} PDFObject */
/** @typedef {import('pdf-lib').PDFContext} Context */
/** @typedef {import('pdf-lib').PDFDict} Dict */

const { maxPages, maxObjects, maxDecompressedBytes } = JSON.parse(process.argv[2]);
const NOT_PARSABLE = 'content is not a parsable PDF';
const INVALID_PAGE_TREE = 'content is not a parsable PDF: its page tree lists a page or node twice, or a node under the wrong parent';
const tooManyPages = `content exceeds the limit of ${maxPages} pages (PDF_MAX_PAGES)`;
const tooManyObjects = `content exceeds the limit of ${maxObjects} objects (PDF_MAX_OBJECTS)`;
const tooLarge = `content exceeds the limit of ${maxDecompressedBytes} bytes decompressed (PDF_MAX_DECOMPRESSED_BYTES)`;

// pdf-lib warns on stderr about every odd object; the verdict is what counts.
console.warn = () => undefined;
console.log = () => undefined;

/** What the job in progress has cost. The first limit passed is its verdict: pdf-lib catches some errors and goes on. */
/** @type {{ objects: number, decompressed: number, exceeded: string | undefined }} */
let job = { objects: 0, decompressed: 0, exceeded: undefined };

/**
 * @param {string} problem
 * @returns {never}
 */
function exceed(problem) {
  job.exceeded ??= problem;
  throw new Error(problem);
}

// Every indirect object pdf-lib parses, from the file or from an object stream, is assigned here.
const assign = PDFContext.prototype.assign;
/**
 * @this {Context}
 * @param {import('pdf-lib').PDFRef} ref
 * @param {PDFObject} object
 */
PDFContext.prototype.assign = function (ref, object) {
  if (++job.objects > maxObjects) exceed(tooManyObjects);
  return assign.call(this, ref, object);
};

// pdf-lib inflates object streams and cross-reference streams whole while it parses (their objects
// are what it parses). Here they inflate within what is left of the job's budget and stop there:
// natively for FlateDecode, through pdf-lib's own decoders a chunk at a time for the other filters.
const TYPE = PDFName.of('Type');
const OBJECT_STREAM = PDFName.of('ObjStm');
const OBJECT_COUNT = PDFName.of('N');
const FILTER = PDFName.of('Filter');
const FLATE = PDFName.of('FlateDecode');
const CHUNK_BYTES = 64 * 1024;
ByteStream.fromPDFRawStream = (rawStream) => ByteStream.of(decodeWithinBudget(rawStream));

/**
 * @param {import('pdf-lib').PDFRawStream} rawStream
 * @returns {Uint8Array}
 */
function decodeWithinBudget(rawStream) {
  const { dict } = rawStream;
  // An object stream says how many objects it holds: no need to inflate one that holds too many.
  const objectCount = dict.lookup(OBJECT_COUNT);
  if (dict.lookup(TYPE) === OBJECT_STREAM && objectCount instanceof PDFNumber && job.objects + objectCount.asNumber() > maxObjects) exceed(tooManyObjects);
  const left = maxDecompressedBytes - job.decompressed;
  if (left <= 0) exceed(tooLarge);
  /** @type {Uint8Array | undefined} */
  let decoded;
  if (dict.lookup(FILTER) === FLATE) {
    try {
      decoded = zlib.inflateSync(rawStream.contents, { maxOutputLength: left, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ERR_BUFFER_TOO_LARGE') exceed(tooLarge);
      // zlib refuses what pdf-lib's inflater forgives (a wrong checksum): that one decides below
    }
  }
  if (!decoded) {
    // pdf-lib's decoders keep their position in `pos`, and getBytes() with no length reads the rest.
    const stream = /** @type {{ pos: number, getBytes(length?: number): Uint8Array, reset(): void }} */ (
      /** @type {unknown} */ (decodePDFRawStream(rawStream))
    );
    while (stream.getBytes(CHUNK_BYTES).length > 0) if (stream.pos > left) exceed(tooLarge);
    stream.reset();
    decoded = stream.getBytes();
  }
  job.decompressed += decoded.length;
  return decoded;
}

// pdf-lib spent a third of a parse on names: it reads one a byte at a time into a string, runs a regular
// expression over it, and does the same for the keys it looks up in every dictionary it parses (/Type).
// Here a name is read in one step and each one seen is looked up once: the same PDFName objects, a
// check about 25% cheaper (0.50 against 0.66 ms of the PDF process's CPU for the bench's 42 KB upload).
const SOLIDUS = 0x2f;
const NAMES_KEPT = 10_000;
/** @type {Map<string, import('pdf-lib').PDFName>} */
const names = new Map();
const nameOf = PDFName.of;
/** @param {string} raw */
PDFName.of = (raw) => {
  let name = names.get(raw);
  if (name === undefined) {
    name = nameOf(raw);
    if (names.size >= NAMES_KEPT) names.clear(); // a PDF of many names costs what it did before, no memory more
    names.set(raw, name);
  }
  return name;
};
/** @type {{ parseName(this: { bytes: { bytes: Uint8Array, idx: number, length: number, column: number, assertNext(byte: number): number } }): PDFObject }} */ (
  /** @type {unknown} */ (PDFObjectParser.prototype)
).parseName = function () {
  const stream = this.bytes;
  stream.assertNext(SOLIDUS);
  const { bytes, idx: start, length } = stream;
  let end = start;
  while (end < length && !IsWhitespace[bytes[end]] && !IsDelimiter[bytes[end]]) end++;
  stream.idx = end;
  stream.column += end - start; // a name holds no newline
  // A byte is a character, as pdf-lib's charFromCode makes it (apply, not a spread: the spread iterates, and cost more than pdf-lib).
  const raw =
    end - start <= 64
      ? String.fromCharCode.apply(null, /** @type {number[]} */ (/** @type {unknown} */ (bytes.subarray(start, end))))
      : Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
  return PDFName.of(raw);
};

const PAGES = PDFName.of('Pages');
const PAGE = PDFName.of('Page');
const KIDS = PDFName.of('Kids');
const PARENT = PDFName.of('Parent');
const MEDIA_BOX = PDFName.of('MediaBox');

/**
 * [width, height] of each page, in order, walking the page tree as pdf-lib does (a kid that is neither
 * /Pages nor /Page is skipped). Refuses a node met twice (a tree listing its children twice has 2^depth
 * paths) and a node whose /Parent is not the node listing it (pdf-lib follows /Parent for inherited
 * attributes, forever around a cycle), and stops at the page limit.
 */
/** @param {Context} context */
function walkPageTree(context) {
  const seen = new Set();
  /** @type {[number, number][]} */
  const sizes = [];
  const catalog = context.lookup(context.trailerInfo.Root);
  if (!(catalog instanceof PDFDict)) return { problem: NOT_PARSABLE };
  /** @type {{ reference: PDFObject | undefined, parent: PDFObject | undefined, mediaBox: PDFObject | undefined }[]} */
  const stack = [{ reference: catalog.get(PAGES), parent: undefined, mediaBox: undefined }];
  while (stack.length > 0) {
    const { reference, parent, mediaBox: inherited } = /** @type {(typeof stack)[number]} */ (stack.pop());
    const node = context.lookup(reference);
    const type = node instanceof PDFDict ? node.lookup(TYPE) : undefined;
    if (!parent && type !== PAGES) return { problem: NOT_PARSABLE };
    if (type !== PAGES && type !== PAGE) continue;
    if (seen.has(node) || context.lookup(/** @type {Dict} */ (node).get(PARENT)) !== parent) return { problem: INVALID_PAGE_TREE };
    seen.add(node);
    const mediaBox = /** @type {Dict} */ (node).get(MEDIA_BOX) ?? inherited; // a /Pages or /Page node is a dictionary
    if (type === PAGE) {
      if (sizes.length === maxPages) return { problem: tooManyPages };
      const size = sizeOf(context.lookup(mediaBox));
      if (!size) return { problem: NOT_PARSABLE };
      sizes.push(size);
      continue;
    }
    const kids = /** @type {Dict} */ (node).lookup(KIDS);
    if (!(kids instanceof PDFArray)) return { problem: NOT_PARSABLE };
    for (let index = kids.size() - 1; index >= 0; index--) stack.push({ reference: kids.get(index), parent: node, mediaBox });
  }
  return { sizes };
}

/** [width, height] of a rectangle [x1 y1 x2 y2], as pdf-lib's page.getSize() reads it. */
/**
 * @param {PDFObject | undefined} box
 * @returns {[number, number] | undefined}
 */
function sizeOf(box) {
  if (!(box instanceof PDFArray) || box.size() !== 4) return undefined;
  const numbers = [0, 1, 2, 3].map((index) => box.lookup(index));
  if (!numbers.every((number) => number instanceof PDFNumber)) return undefined;
  const [x1, y1, x2, y2] = numbers.map((number) => number.asNumber());
  return [x2 - x1, y2 - y1];
}

/** pdf-lib's parser alone (PDFDocument.load adds nothing needed here), with no pauses between objects. */
/**
 * @param {Buffer} bytes
 * @param {{ strict: boolean }} options
 * @returns {Promise<{ context?: Context, exceeded?: string }>}
 */
async function parse(bytes, { strict }) {
  job = { objects: 0, decompressed: 0, exceeded: undefined };
  try {
    return { context: await PDFParser.forBytesWithOptions(bytes, Infinity, strict).parseDocument() };
  } catch {
    return { exceeded: job.exceeded };
  }
}

/** @param {Context} context */
const isEncrypted = (context) => context.lookup(context.trailerInfo.Encrypt) !== undefined;

/**
 * @param {Buffer} sent
 * @param {{ path?: string, signatures?: boolean } | undefined} job
 */
async function inspect(sent, { path, signatures } = {}) {
  const bytes = path ? await fs.promises.readFile(path) : sent;
  if (!bytes.subarray(0, 1024).toString('latin1').includes('%PDF-')) return { problem: 'content must be a PDF file' };
  // A PDF ends with %%EOF; one cut short (an interrupted upload) does not, though pdf-lib would often still open it.
  if (
    !bytes
      .subarray(Math.max(0, bytes.length - 1024))
      .toString('latin1')
      .includes('%%EOF')
  )
    return { problem: 'content is a truncated PDF (no %%EOF marker)' };
  const { context, exceeded } = await parse(bytes, { strict: true });
  if (exceeded) return { problem: exceeded };
  // Encrypted object streams can make the strict parse fail before the trailer's /Encrypt is read.
  const lenient = context ?? (await parse(bytes, { strict: false })).context;
  if (lenient && isEncrypted(lenient)) return { problem: 'content must not be an encrypted PDF' };
  if (!context) return { problem: NOT_PARSABLE };
  const { sizes, problem } = walkPageTree(context);
  if (problem) return { problem };
  const pageSizes = /** @type {[number, number][]} */ (sizes); // there when there is no problem
  if (pageSizes.length === 0) return { problem: 'content must be a PDF with at least one page' };
  if (!signatures) return { facts: { pageCount: pageSizes.length, pageSizes } };
  const signed = readSignatures(bytes);
  if (signed.problem) return { problem: signed.problem };
  return { facts: { pageCount: pageSizes.length, pageSizes, signatures: signed.signatures, validationData: signed.validationData } };
}

serveJobs(inspect);
