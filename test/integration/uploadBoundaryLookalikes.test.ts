import crypto from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { IN_MEMORY_BYTES } from '../../src/api/receivedFile';
import { assemblePdf } from '../support/pdfs';
import { createTestAccount, useSharedSystem } from '../support/system';

// formidable's multipart parser hands on the bytes of a false lead (file data that began like the
// delimiter, CRLF "--" boundary, and was not it) as a view of one small buffer it reuses for the next
// false lead, while the file writer keeps what it was given until the body ends. Each upload here is
// a valid PDF holding false leads in a stream, sent on a raw socket, and must be stored byte for byte
// with the SHA-256 of what was sent.

const BOUNDARY = 'SignetLookalike7f3a9c';
const DELIMITER = `\r\n--${BOUNDARY}`;
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

/** Beginnings of the delimiter, each broken by a byte that is not in the boundary. */
const prefixLookalikes = [1, 2, 3, 4, 5, 9, 14, DELIMITER.length - 1].map((length) => `${DELIMITER.slice(0, length)}x`);
/** The whole delimiter followed by neither CRLF nor "--": the parser's false leads that differ from one another. */
const wholeLookalikes = [`${DELIMITER}\rZ`, `${DELIMITER}-Y`, `${DELIMITER}Q`, `${DELIMITER}-Y`, `${DELIMITER}\rZ`];

/**
 * A one-page PDF whose unreferenced stream object holds the lookalikes, each after a line of text, and
 * `padding` random bytes between the first half of them and the second (past IN_MEMORY_BYTES, the second
 * half reaches the writer once it writes to a temporary file).
 */
function pdfHolding(lookalikes: string[], padding: number) {
  const lines = lookalikes.map((lookalike, index) => Buffer.from(`line ${index}\n${lookalike}`, 'latin1'));
  const half = Math.ceil(lines.length / 2);
  const data = Buffer.concat([...lines.slice(0, half), crypto.randomBytes(padding), ...lines.slice(half), Buffer.from('\nend')]);
  const stream = Buffer.concat([Buffer.from(`<< /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')]);
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
    stream,
  ]);
}

/** The file part, then a fileName part (a field after the file, as some clients send it). */
function multipartBody(pdf: Buffer) {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="lookalikes.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
    pdf,
    Buffer.from(`\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="fileName"\r\n\r\nlookalikes.pdf\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** Where to cut a body: inside every other lookalike, each at another offset (from its first byte to its last). */
function cutsInside(body: Buffer, lookalikes: string[]) {
  const cuts: number[] = [];
  let from = 0;
  lookalikes.forEach((lookalike, index) => {
    const at = body.indexOf(`line ${index}\n${lookalike}`, from, 'latin1') + `line ${index}\n`.length;
    from = at + lookalike.length;
    if (index % 2 === 0) cuts.push(at + (index % (lookalike.length + 1)));
  });
  return cuts;
}

/** POST /api/v1/documents on a raw socket: the head, then the body in pieces cut at `cuts`, a millisecond apart. */
async function postInPieces(url: string, apiKey: string, body: Buffer, cuts: number[]) {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const answer: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => answer.push(chunk));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  const head = [
    'POST /api/v1/documents HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${apiKey}`,
    `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
    `Content-Length: ${body.length}`,
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  const write = (bytes: Buffer | string) => new Promise<void>((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())));
  await write(head);
  const ends = [...cuts, body.length];
  for (let start = 0, index = 0; index < ends.length; start = ends[index], index += 1) {
    await write(body.subarray(start, ends[index]));
    if (index < cuts.length) await sleep(1); // the pieces reach the parser in separate reads, not to wait for anything
  }
  await closed;
  const text = Buffer.concat(answer).toString('latin1');
  const status = Number(text.slice('HTTP/1.1 '.length, 'HTTP/1.1 '.length + 3));
  return { status, body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) };
}

describe('POST /documents (multipart): file data that looks like the boundary', function () {
  this.timeout(60_000);
  useSharedSystem();

  const cases = [
    { name: 'beginnings of the delimiter', lookalikes: prefixLookalikes },
    { name: 'the whole delimiter followed by neither CRLF nor "--"', lookalikes: wholeLookalikes },
  ];
  const sizes = [
    { name: 'in memory', padding: 1000 },
    { name: 'past IN_MEMORY_BYTES', padding: IN_MEMORY_BYTES + 100_000 },
  ];
  for (const { name, lookalikes } of cases) {
    for (const size of sizes) {
      for (const sending of ['in one write', 'cut inside the lookalikes'] as const) {
        it(`${name}, ${size.name}, ${sending}: stored byte for byte with the SHA-256 of what was sent`, async () => {
          const { apiKey, request, system } = await createTestAccount();
          const pdf = pdfHolding(lookalikes, size.padding);
          const body = multipartBody(pdf);
          const created = await postInPieces(system.url!, apiKey, body, sending === 'in one write' ? [] : cutsInside(body, lookalikes));
          expect(created.status, JSON.stringify(created.body)).to.equal(201);
          expect(created.body).to.include({ status: 'ready', fileName: 'lookalikes.pdf', fileSize: pdf.length, sha256: sha256(pdf) });
          const stored = await request('GET', `/api/v1/documents/${created.body.id}/file`);
          expect(stored.status).to.equal(200);
          expect(stored.bytes.equals(pdf), 'the stored file is the one sent').to.equal(true);
        });
      }
    }
  }
});
