// A JPEG goes into the sealed PDF as it is (DCTDecode): the viewer decodes it, we never do. So it is read here
// first for what pdf-lib's embedder and a viewer rely on, in one pass bounded by its size: SOI first; each segment
// whole inside the file; one frame header, baseline or progressive Huffman, 8-bit, of 1, 3 or 4 components and
// sane dimensions; a scan after it; EOI. Anything else is refused before it reaches a PDF.

export interface JpegLimits {
  maxPixels: number;
  maxSide: number;
}

export interface Jpeg {
  width: number;
  height: number;
  components: number;
}

/** Why bytes are not a JPEG that can be drawn. `message` completes "must …". */
export class JpegError extends Error {}

const undecodable = () => new JpegError('be a JPEG image that can be decoded');

// Frame headers: baseline, extended and progressive Huffman. Lossless, hierarchical and arithmetic-coded ones
// are rare and not every viewer draws them.
const FRAMES = new Set([0xc0, 0xc1, 0xc2]);
const OTHER_FRAMES = new Set([0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);
// Segments read past: Huffman and quantization tables, restart interval, application data, comments.
const PASSED = (marker: number) => marker === 0xc4 || marker === 0xdb || marker === 0xdd || (marker >= 0xe0 && marker <= 0xef) || marker === 0xfe;

export const isJpeg = (bytes: Buffer) => bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;

/** The JPEG's frame, once the whole file has been walked; throws a JpegError for anything it should not be. */
export function readJpeg(bytes: Buffer, limits: JpegLimits): Jpeg {
  if (!isJpeg(bytes)) throw new JpegError('be a JPEG image');
  let frame: Jpeg | undefined;
  let scans = 0;
  let offset = 2;
  while (offset < bytes.length) {
    if (bytes[offset] !== 0xff) throw undecodable();
    while (bytes[offset] === 0xff) offset++; // fill bytes
    const marker = bytes[offset++];
    if (marker === undefined) throw undecodable();
    if (marker === 0xd9) {
      if (!frame || scans === 0) throw undecodable();
      return frame;
    }
    if (offset + 2 > bytes.length) throw undecodable();
    const length = bytes.readUInt16BE(offset);
    const end = offset + length;
    if (length < 2 || end > bytes.length) throw undecodable();
    if (FRAMES.has(marker)) {
      if (frame) throw undecodable();
      frame = readFrame(bytes.subarray(offset + 2, end), limits);
    } else if (OTHER_FRAMES.has(marker)) {
      throw new JpegError('be a baseline or progressive JPEG');
    } else if (marker === 0xda) {
      if (!frame) throw undecodable();
      scans++;
      offset = endOfScan(bytes, end);
      continue;
    } else if (!PASSED(marker)) {
      throw undecodable();
    }
    offset = end;
  }
  throw undecodable(); // no EOI
}

function readFrame(header: Buffer, limits: JpegLimits): Jpeg {
  if (header.length < 6) throw undecodable();
  const [precision, height, width, components] = [header[0], header.readUInt16BE(1), header.readUInt16BE(3), header[5]];
  if (precision !== 8 || ![1, 3, 4].includes(components) || header.length !== 6 + 3 * components) throw undecodable();
  if (width === 0 || height === 0) throw undecodable();
  if (width > limits.maxSide || height > limits.maxSide || width * height > limits.maxPixels) {
    throw new JpegError(`be at most ${limits.maxSide} pixels a side and ${Math.round(limits.maxPixels / 1e6)} megapixels (this one is ${width}×${height})`);
  }
  return { width, height, components };
}

/** Where the entropy-coded data from `from` ends: at the first marker that is neither a stuffed 0xFF00 nor a restart. */
function endOfScan(bytes: Buffer, from: number): number {
  let offset = from;
  for (;;) {
    offset = bytes.indexOf(0xff, offset);
    if (offset < 0 || offset + 1 >= bytes.length) throw undecodable();
    const next = bytes[offset + 1];
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) offset += next === 0xff ? 1 : 2;
    else return offset;
  }
}
