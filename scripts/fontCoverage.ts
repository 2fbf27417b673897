// Writes src/pdf/fontCoverage.json: the fonts that draw text in sealed PDFs, in the order they are tried,
// and the characters each one draws that none before it does, read from the fonts' own character maps.
// Reading them takes half a second (the CJK slices are WOFF2), too long for the api at run time, so the
// table is made here and test/unit/drawableText.test.ts checks that it still matches the installed fonts.
// Run after upgrading dejavu-fonts-ttf or noto-sans-sc:  npx tsx scripts/fontCoverage.ts
import fs from 'node:fs';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';

const NOTO_SANS_SC = 'noto-sans-sc/noto_sans_sc_regular';

/** A slice's number (k3k….12.woff2); the few named by script instead come last. */
const sliceNumber = (name: string) => Number(/\.(\d+)\.woff2$/.exec(name)?.[1] ?? Number.MAX_SAFE_INTEGER);

/** Font files as package paths (for require.resolve): DejaVu Sans first, then Noto Sans SC's slices in order. */
function fontFiles(): string[] {
  const slices = fs
    .readdirSync(path.dirname(require.resolve(`${NOTO_SANS_SC}/css.css`)))
    .filter((name) => name.endsWith('.woff2'))
    .sort((a, b) => sliceNumber(a) - sliceNumber(b) || a.localeCompare(b));
  return ['dejavu-fonts-ttf/ttf/DejaVuSans.ttf', ...slices.map((name) => `${NOTO_SANS_SC}/${name}`)];
}

export interface FontCoverage {
  fonts: {
    file: string;
    /** Ranges of code points as pairs: the gap after the previous range's last code point, then the range's length less one. */
    ranges: number[];
  }[];
}

export function computeFontCoverage(): FontCoverage {
  const taken = new Set<number>();
  const fonts = fontFiles().map((file) => {
    const font = fontkit.create(fs.readFileSync(require.resolve(file)));
    // (A character map may list a code point it maps to no glyph, such as the 0xFFFF that ends format 4.)
    const codePoints = font.characterSet.filter((codePoint) => !taken.has(codePoint) && font.hasGlyphForCodePoint(codePoint)).sort((a, b) => a - b);
    codePoints.forEach((codePoint) => taken.add(codePoint));
    const ranges: number[] = [];
    let previousEnd = -1;
    for (let i = 0; i < codePoints.length;) {
      let end = i;
      while (end + 1 < codePoints.length && codePoints[end + 1] === codePoints[end] + 1) end++;
      ranges.push(codePoints[i] - previousEnd - 1, codePoints[end] - codePoints[i]);
      previousEnd = codePoints[end];
      i = end + 1;
    }
    return { file, ranges };
  });
  return { fonts: fonts.filter((font) => font.ranges.length > 0) }; // a slice DejaVu covers whole is never needed
}

export const coverageFile = path.join(__dirname, '../src/pdf/fontCoverage.json');

if (require.main === module) {
  fs.writeFileSync(coverageFile, `${JSON.stringify(computeFontCoverage())}\n`);
  console.log(`wrote ${coverageFile}`);
}
