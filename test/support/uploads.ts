import { client } from './http';

// Files a signer uploads in tests: JPEGs made here (any size, or a header that lies), and the upload call.

const segment = (marker: number, body: Buffer) => Buffer.concat([Buffer.from([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff]), body]);

/**
 * A baseline greyscale JPEG of `width` × `height` mid-grey pixels: one quantization table, one-symbol Huffman
 * tables, every block's DC difference 0 and its AC an end-of-block (two bits a block). `frame` puts another frame
 * marker (0xC3: lossless) or other dimensions in its header; `truncate` leaves out the end marker.
 */
export function jpegOf(width: number, height: number, options: { claim?: { width: number; height: number }; frame?: number; truncate?: boolean } = {}): Buffer {
  const { claim = { width, height }, frame = 0xc0, truncate = false } = options;
  const sof = Buffer.from([8, claim.height >> 8, claim.height & 0xff, claim.width >> 8, claim.width & 0xff, 1, 1, 0x11, 0]);
  const table = (kind: number) => Buffer.from([kind, 1, ...Array(15).fill(0), 0]);
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const bits = '00'.repeat(blocks).padEnd(Math.ceil((2 * blocks) / 8) * 8, '1');
  const data = Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xdb, Buffer.from([0, ...Array(64).fill(1)])),
    segment(frame, sof),
    segment(0xc4, table(0x00)),
    segment(0xc4, table(0x10)),
    segment(0xda, Buffer.from([1, 1, 0, 0, 63, 0])),
    data,
    truncate ? Buffer.alloc(0) : Buffer.from([0xff, 0xd9]),
  ]);
}

/** POST /sign/{token}/uploads with `bytes` as the file part. */
export function uploadAs(baseUrl: string, token: string, bytes: Buffer, fileName: string, type = 'application/octet-stream') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), fileName);
  return client(baseUrl)('POST', `/sign/${token}/uploads`, { body: form });
}
