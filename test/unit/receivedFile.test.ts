import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { expect } from 'chai';
import { IN_MEMORY_BYTES, ReceivedFileWriter, removeLeftoverFiles } from '../../src/api/receivedFile';

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

describe('ReceivedFileWriter', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-received-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** `into` null: a writer without a directory. */
  async function receive(bytes: Buffer, chunkBytes = 64 * 1024, into: string | null = dir) {
    const writer = new ReceivedFileWriter(into ?? undefined);
    for (let offset = 0; offset < bytes.length; offset += chunkBytes) writer.write(bytes.subarray(offset, offset + chunkBytes));
    writer.end();
    await finished(writer);
    return writer;
  }

  it('keeps a file of up to 1 MiB in memory, with its size and SHA-256', async () => {
    const bytes = crypto.randomBytes(IN_MEMORY_BYTES);
    const { received } = await receive(bytes);
    expect(received).to.deep.include({ size: bytes.length, sha256: sha256(bytes) });
    expect(received!.path).to.equal(undefined);
    expect(received!.bytes!.equals(bytes)).to.equal(true);
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it('writes a larger one to a temporary file, which discard() removes', async () => {
    const bytes = crypto.randomBytes(IN_MEMORY_BYTES + 1);
    const writer = await receive(bytes);
    expect(writer.received).to.deep.include({ size: bytes.length, sha256: sha256(bytes) });
    expect(writer.received!.bytes).to.equal(undefined);
    expect(path.dirname(writer.received!.path!)).to.equal(dir);
    expect(fs.readFileSync(writer.received!.path!).equals(bytes)).to.equal(true);
    await writer.discard();
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  for (const [name, size] of [
    ['in memory', IN_MEMORY_BYTES - 10],
    ['in a temporary file', 3 * IN_MEMORY_BYTES],
  ] as const) {
    it(`keeps a body sent in fragments of every size, small ones joined, byte for byte (${name})`, async () => {
      const bytes = crypto.randomBytes(size);
      const writer = new ReceivedFileWriter(dir);
      const lengths = [1, 3, 4095, 4096, 2, 70_000, 7, 65_536, 65_535, 1, 40_000];
      for (let offset = 0, index = 0; offset < bytes.length; index += 1) {
        const length = lengths[index % lengths.length];
        // Small pieces follow one another, and runs of them past one piece of the writer's.
        const times = length < 10 ? 5000 : 1;
        for (let time = 0; time < times && offset < bytes.length; time += 1, offset += length) writer.write(bytes.subarray(offset, offset + length));
      }
      writer.end();
      await finished(writer);
      const { received } = writer;
      expect(received).to.deep.include({ size: bytes.length, sha256: sha256(bytes) });
      const kept = received!.bytes ?? fs.readFileSync(received!.path!);
      expect(kept.equals(bytes)).to.equal(true);
      await writer.discard();
    });
  }

  it('without a directory keeps a larger one in memory too, writing nothing (a PDF to verify)', async () => {
    const bytes = crypto.randomBytes(3 * IN_MEMORY_BYTES);
    const { received } = await receive(bytes, 64 * 1024, null);
    expect(received).to.deep.include({ size: bytes.length, sha256: sha256(bytes) });
    expect(received!.path).to.equal(undefined);
    expect(received!.bytes!.equals(bytes)).to.equal(true);
  });

  it('removes its temporary file when destroyed mid-body', async () => {
    const writer = new ReceivedFileWriter(dir);
    writer.write(crypto.randomBytes(2 * IN_MEMORY_BYTES));
    await new Promise((resolve) => writer.write(Buffer.alloc(1), resolve));
    expect(fs.readdirSync(dir)).to.have.length(1);
    const closed = new Promise((resolve) => writer.once('close', resolve));
    writer.once('error', () => undefined);
    writer.destroy(new Error('the client went'));
    await closed;
    expect(fs.readdirSync(dir)).to.deep.equal([]);
    expect(writer.received).to.equal(undefined);
  });
});

describe('removeLeftoverFiles', () => {
  it('removes the temporary files not written for an hour, and nothing else', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-leftovers-'));
    try {
      for (const name of ['old.part', 'fresh.part', 'old.txt']) fs.writeFileSync(path.join(dir, name), 'x');
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
      for (const name of ['old.part', 'old.txt']) fs.utimesSync(path.join(dir, name), twoHoursAgo, twoHoursAgo);
      await removeLeftoverFiles(dir);
      expect(fs.readdirSync(dir).sort()).to.deep.equal(['fresh.part', 'old.txt']);
      await removeLeftoverFiles(path.join(dir, 'missing')); // never fails
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
