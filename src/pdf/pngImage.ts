import zlib from 'node:zlib';

// pdf-lib's PNG decoder trusts the file: cut inside its image data, it loops forever. So a PNG is read
// here first, completely and with work bounded by its size (every chunk inside the file with its CRC
// right, IHDR's values sane, the image data inflating to exactly the size IHDR implies, each scanline
// with a known filter), and pdf-lib only ever sees a PNG rebuilt from what was checked.

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Whether the bytes begin as a PNG does (its eight-byte signature); readPng checks the rest. */
export const isPng = (bytes: Buffer) => bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE);
/** Bit depths allowed for each colour type, and its channels per pixel. */
const COLOUR_TYPES: Record<number, { depths: number[]; channels: number }> = {
  0: { depths: [1, 2, 4, 8, 16], channels: 1 },
  2: { depths: [8, 16], channels: 3 },
  3: { depths: [1, 2, 4, 8], channels: 1 },
  4: { depths: [8, 16], channels: 2 },
  6: { depths: [8, 16], channels: 4 },
};
/** Adam7's passes: first column and row, then the step between columns and rows. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

export interface PngLimits {
  maxPixels: number;
  maxSide: number;
}

export interface Png {
  width: number;
  height: number;
  /** IHDR, PLTE and tRNS as found, and the image data inflated. */
  header: Buffer;
  palette?: Buffer;
  transparency?: Buffer;
  pixels: Buffer;
}

/** Why bytes are not a PNG that can be drawn. `message` completes "must …" (e.g. "must be a PNG image"). */
export class PngError extends Error {}

const notPng = () => new PngError('be a PNG image');
const undecodable = () => new PngError('be a PNG image that can be decoded');

interface Chunk {
  type: string;
  data: Buffer;
}

/** The chunks after the signature, each inside the file and with its CRC right; IEND last, nothing after it. */
function readChunks(bytes: Buffer): Chunk[] {
  const chunks: Chunk[] = [];
  let offset = SIGNATURE.length;
  while (offset < bytes.length) {
    if (bytes.length - offset < 12) throw undecodable();
    const length = bytes.readUInt32BE(offset);
    if (length > bytes.length - offset - 12) throw undecodable();
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) throw undecodable();
    const end = offset + 8 + length;
    if (zlib.crc32(bytes.subarray(offset + 4, end)) !== bytes.readUInt32BE(end)) throw undecodable();
    chunks.push({ type, data: bytes.subarray(offset + 8, end) });
    offset = end + 4;
    if (type === 'IEND') break;
  }
  if (chunks.at(-1)?.type !== 'IEND' || offset !== bytes.length || chunks.at(-1)!.data.length !== 0) throw undecodable();
  return chunks;
}

/** The image data's size, each scanline with its filter byte, and where each scanline starts. */
function scanlines(width: number, height: number, bitsPerPixel: number, interlaced: boolean): number[] {
  const passes = interlaced ? ADAM7 : [[0, 0, 1, 1]];
  const starts: number[] = [];
  let offset = 0;
  for (const [column, row, columnStep, rowStep] of passes) {
    const passWidth = Math.ceil((width - column) / columnStep);
    const passHeight = Math.ceil((height - row) / rowStep);
    if (passWidth <= 0 || passHeight <= 0) continue;
    const lineBytes = 1 + Math.ceil((passWidth * bitsPerPixel) / 8);
    for (let line = 0; line < passHeight; line++) {
      starts.push(offset);
      offset += lineBytes;
    }
  }
  starts.push(offset); // the end
  return starts;
}

/**
 * Reads a PNG completely, or throws PngError: the work is bounded by the file's size and by the
 * pixels `limits` allow (checked before anything is inflated).
 */
export function readPng(bytes: Buffer, limits: PngLimits): Png {
  if (bytes.length < SIGNATURE.length + 25 || !bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw notPng();
  if (bytes.toString('latin1', 12, 16) !== 'IHDR' || bytes.readUInt32BE(8) !== 13) throw notPng();
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  if (width < 1 || height < 1 || width > limits.maxSide || height > limits.maxSide || width * height > limits.maxPixels) {
    throw new PngError(`be at most ${limits.maxPixels} pixels, ${limits.maxSide} on a side (this one is ${width} × ${height})`);
  }
  const chunks = readChunks(bytes);
  const [depth, colourType, compression, filter, interlace] = chunks[0].data.subarray(8);
  const colour = COLOUR_TYPES[colourType];
  if (!colour?.depths.includes(depth) || compression !== 0 || filter !== 0 || interlace > 1) throw undecodable();

  let palette: Buffer | undefined;
  let transparency: Buffer | undefined;
  const imageData: Buffer[] = [];
  let imageDataEnded = false;
  for (const { type, data } of chunks.slice(1, -1)) {
    if (type === 'IDAT') {
      if (imageDataEnded) throw undecodable(); // IDAT chunks must follow one another
      imageData.push(data);
      continue;
    }
    if (imageData.length > 0) imageDataEnded = true;
    if (type === 'PLTE') {
      const entries = data.length / 3;
      const allowed = colourType === 3 ? 2 ** depth : 256;
      if (palette || transparency || imageData.length || colourType === 0 || colourType === 4 || !Number.isInteger(entries) || entries < 1 || entries > allowed)
        throw undecodable();
      palette = data;
    } else if (type === 'tRNS') {
      const fits =
        colourType === 0 ? data.length === 2 : colourType === 2 ? data.length === 6 : colourType === 3 && !!palette && data.length <= palette.length / 3;
      if (transparency || imageData.length || !fits) throw undecodable();
      transparency = data;
    } else if (type === 'IHDR' || type === 'IEND' || /^[A-Z]/.test(type)) {
      throw undecodable(); // a second header, or a critical chunk this reader does not know
    }
    // Other ancillary chunks (text, gamma, animation…) are left out: pdf-lib never sees them.
  }
  if (imageData.length === 0 || (colourType === 3 && !palette)) throw undecodable();

  const lines = scanlines(width, height, depth * colour.channels, interlace === 1);
  const size = lines.at(-1)!;
  let pixels: Buffer;
  try {
    // Never more than IHDR implies: a stream that would give more stops here.
    pixels = zlib.inflateSync(Buffer.concat(imageData), { maxOutputLength: size });
  } catch {
    throw undecodable();
  }
  if (pixels.length !== size || lines.slice(0, -1).some((start) => pixels[start] > 4)) throw undecodable();
  return { width, height, header: chunks[0].data, palette, transparency, pixels };
}

/** One PNG chunk: length, type, data and CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** The PNG rebuilt from what readPng checked: its header, palette, transparency and image data, compressed anew. */
export function encodePng(png: Png): Buffer {
  return Buffer.concat([
    SIGNATURE,
    pngChunk('IHDR', png.header),
    ...(png.palette ? [pngChunk('PLTE', png.palette)] : []),
    ...(png.transparency ? [pngChunk('tRNS', png.transparency)] : []),
    pngChunk('IDAT', zlib.deflateSync(png.pixels)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}
