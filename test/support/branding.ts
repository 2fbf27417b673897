import zlib from 'node:zlib';
import { pngChunk as chunk } from '../../src/pdf/pngImage';

// Images for brand tests: PNGs made here (any size, or a header that lies), and hostile SVGs.

/** A PNG of `width` × `height` grey pixels; `claim` puts other dimensions in its header (a decompression bomb's). */
export function pngOf(width: number, height: number, claim?: { width: number; height: number }): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(claim?.width ?? width, 0);
  header.writeUInt32BE(claim?.height ?? height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  const rows = Buffer.alloc((width + 1) * height, 0x80);
  for (let row = 0; row < height; row++) rows[row * (width + 1)] = 0; // filter: none
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;

/** Everything an SVG logo must not keep, each next to a shape it may. */
export const hostileSvg = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE svg [<!ENTITY boom "boom">]>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 120 40" onload="alert('onload')">
  <script>alert('script')</script>
  <style>@import url(http://evil.example/style.css); rect { fill: url(http://evil.example/p.svg#x) }</style>
  <defs><linearGradient id="g"><stop offset="0" stop-color="#1d4ed8"/><stop offset="1" stop-color="#0f172a"/></linearGradient></defs>
  <rect id="box" width="120" height="40" fill="url(#g)" onclick="alert('click')" style="stroke:url(http://evil.example/s.svg#y);stroke-width:2"/>
  <use href="http://evil.example/a.svg#x"/>
  <use xlink:href="https://evil.example/b.svg#y"/>
  <use href="#box"/>
  <image href="http://evil.example/tracker.png" width="1" height="1"/>
  <foreignObject width="100" height="40"><div xmlns="http://www.w3.org/1999/xhtml"><iframe src="http://evil.example/"></iframe>inside</div></foreignObject>
  <a href="javascript:alert('link')"><text x="10" y="25" fill="#ffffff">Acme</text></a>
  <path d="M0 0L10 10" filter="url(http://evil.example/f.svg#f)"/>
  <circle r="2" fill="u\\72l(http://evil.example/escaped.svg#e)" mask="url( 'http://evil.example/m.svg#m' )"/>
</svg>`;
