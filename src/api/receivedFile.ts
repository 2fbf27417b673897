import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';

/** A received file up to this size stays in memory; a larger one goes to a temporary file as it arrives. */
export const IN_MEMORY_BYTES = 1024 * 1024;

/** Temporary files older than this are left over from a process that died (a live upload writes one every few seconds). */
const LEFTOVER_AFTER_MS = 60 * 60 * 1000;

/** A chunk shorter than this is copied, with the small chunks around it, into a piece of PIECE_BYTES before it is kept. */
const SMALL_CHUNK_BYTES = 4096;
const PIECE_BYTES = 64 * 1024;

/**
 * A file from a request body, counted and hashed as it arrived: a small one in memory (`bytes`), a
 * larger one in a temporary file (`path`) so that the api never holds a large body. The request that
 * received it removes the temporary file when it ends, however it ends.
 */
export interface ReceivedFile {
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
  bytes?: Buffer;
  path?: string;
}

/** A file already in memory (a base64 JSON field), as a ReceivedFile. */
export const receivedFromBytes = (bytes: Buffer): ReceivedFile => ({
  size: bytes.length,
  sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
  bytes,
});

/**
 * Where a request body's file goes as it arrives: memory until it passes IN_MEMORY_BYTES, then a new
 * file in `dir` (`<uuid>.part`, created here, never reused). `received` is there once the stream has
 * finished. `discard()` removes the temporary file; a destroyed writer (a client gone, a limit passed)
 * discards itself. A temporary file is only ever read by the request that wrote it, so a process
 * killed mid-upload leaves a stray file, never a document. It keeps the large buffers it is given,
 * without copying them, until they are stored: a source must never reuse a buffer it has written
 * (formidable's multipart parser would: see jsonOrMultipartBody). Small ones (a body sent or parsed in
 * tiny fragments) are copied into pieces of PIECE_BYTES first, so that a body is held about once however
 * it was cut, never as one object per fragment.
 */
export class ReceivedFileWriter extends Writable {
  received?: ReceivedFile;
  private readonly hash = crypto.createHash('sha256');
  private size = 0;
  private chunks: Buffer[] = [];
  /** Where small chunks are copied: bytes up to pieceTaken are in `chunks` or written, those up to pieceUsed not yet. */
  private piece?: Buffer;
  private pieceUsed = 0;
  private pieceTaken = 0;
  private file?: fs.promises.FileHandle;
  private filePath?: string;
  private discarded = false;
  /** File operations, one after another: a discard waits for a write in progress. */
  private work: Promise<unknown> = Promise.resolve();

  /** `dir` undefined: the file stays in memory whatever its size (its limit is the caller's to enforce). */
  constructor(private readonly dir: string | undefined) {
    super({ autoDestroy: false }); // once finished, the file stays until discard()
  }

  override _writev(chunks: { chunk: Buffer }[], done: (error?: Error | null) => void) {
    const buffers: Buffer[] = [];
    for (const { chunk } of chunks) {
      this.hash.update(chunk);
      this.size += chunk.length;
      if (chunk.length >= SMALL_CHUNK_BYTES) {
        this.takePiece(buffers);
        buffers.push(chunk);
        continue;
      }
      if (!this.piece || chunk.length > this.piece.length - this.pieceUsed) {
        this.takePiece(buffers);
        this.piece = Buffer.allocUnsafeSlow(PIECE_BYTES);
        this.pieceUsed = this.pieceTaken = 0;
      }
      chunk.copy(this.piece, this.pieceUsed);
      this.pieceUsed += chunk.length;
    }
    // Small chunks wait in the piece until it is full, a large chunk comes or the body ends.
    if (buffers.length === 0) return done();
    this.inTurn(() => this.store(buffers), done);
  }

  override _final(done: (error?: Error | null) => void) {
    const rest: Buffer[] = [];
    this.takePiece(rest);
    this.piece = undefined;
    this.inTurn(async () => {
      if (rest.length) await this.store(rest);
      const sha256 = this.hash.digest('hex');
      if (!this.file) {
        // A body that came in one large chunk (most small ones) is kept as it came: no copy.
        const bytes = this.chunks.length === 1 && this.chunks[0].length >= SMALL_CHUNK_BYTES ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
        this.received = { size: this.size, sha256, bytes };
        this.chunks = [];
        return;
      }
      await this.file.close();
      this.file = undefined;
      this.received = { size: this.size, sha256, path: this.filePath };
    }, done);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void) {
    this.discard().then(
      () => done(error),
      () => done(error),
    );
  }

  /** Removes the temporary file, if any (safe to call more than once, and while a write is in progress). */
  discard(): Promise<void> {
    this.discarded = true;
    this.chunks = [];
    this.piece = undefined;
    const removed = this.work.then(async () => {
      await this.file?.close().catch(() => undefined);
      this.file = undefined;
      if (this.filePath) await fs.promises.rm(this.filePath, { force: true });
    });
    this.work = removed.catch(() => undefined);
    return removed;
  }

  private inTurn(step: () => Promise<void>, done: (error?: Error | null) => void) {
    const next = this.work.then(() => (this.discarded ? undefined : step()));
    this.work = next.catch(() => undefined);
    next.then(() => done(), done);
  }

  /** Hands on the piece's bytes not yet handed on; later small chunks go on into the same piece. */
  private takePiece(into: Buffer[]) {
    if (!this.piece || this.pieceUsed === this.pieceTaken) return;
    into.push(this.piece.subarray(this.pieceTaken, this.pieceUsed));
    this.pieceTaken = this.pieceUsed;
  }

  private async store(buffers: Buffer[]) {
    if (this.file) await this.file.writev(buffers);
    else if (this.size <= IN_MEMORY_BYTES || this.dir === undefined) this.chunks.push(...buffers);
    else await this.spill(buffers);
  }

  private async spill(buffers: Buffer[]) {
    const dir = this.dir!; // store() spills only with one
    await fs.promises.mkdir(dir, { recursive: true });
    this.filePath = path.join(dir, `${crypto.randomUUID()}.part`);
    this.file = await fs.promises.open(this.filePath, 'wx', 0o600);
    await this.file.writev([...this.chunks, ...buffers]);
    this.chunks = [];
  }
}

/** Removes the temporary files that a process killed mid-upload left in `dir`; never fails. */
export async function removeLeftoverFiles(dir: string, now = Date.now()) {
  const names = await fs.promises.readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((candidate) => candidate.endsWith('.part'))) {
    const file = path.join(dir, name);
    const stat = await fs.promises.stat(file).catch(() => undefined);
    if (stat && now - stat.mtimeMs > LEFTOVER_AFTER_MS) await fs.promises.rm(file, { force: true }).catch(() => undefined);
  }
}

/** Where an api process keeps the temporary files of large uploads: in DATA_DIR, next to what else it keeps. */
export const uploadDirOf = (dataDir: string) => path.join(dataDir, 'uploads');
