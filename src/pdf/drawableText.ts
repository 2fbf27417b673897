import path from 'node:path';
import type { z } from 'zod';
import coverage from './fontCoverage.json';

// Which characters a sealed PDF can show, and in which font: the one answer that validation (refusing
// what cannot be shown, with a 400 naming it) and the renderer (choosing a font for each run of text)
// both use, so they cannot disagree. The table comes from the fonts' own character maps
// (scripts/fontCoverage.ts); a look-up is a binary search, no font is read to answer it.

/** The fonts text is drawn in, in the order they are tried: DejaVu Sans, then Noto Sans SC's slices. */
export const TEXT_FONT_FILES: string[] = coverage.fonts.map((font) =>
  path.join(path.dirname(require.resolve(`${font.file.split('/')[0]}/package.json`)), font.file.split('/').slice(1).join('/')),
);

// Every range of code points with the font that draws it, ordered by first code point.
const starts: number[] = [];
const ends: number[] = [];
const fonts: number[] = [];
coverage.fonts.forEach((font, index) => {
  let previousEnd = -1;
  for (let i = 0; i < font.ranges.length; i += 2) {
    const start = previousEnd + 1 + font.ranges[i];
    previousEnd = start + font.ranges[i + 1];
    starts.push(start);
    ends.push(previousEnd);
    fonts.push(index);
  }
});
const order = starts.map((_, index) => index).sort((a, b) => starts[a] - starts[b]);
const RANGE_STARTS = order.map((index) => starts[index]);
const RANGE_ENDS = order.map((index) => ends[index]);
const RANGE_FONTS = order.map((index) => fonts[index]);

// Shown by no font however well it covers them: control, format, private-use and unassigned characters, line and
// paragraph separators (invisible, or changing what the text around them looks like), and right-to-left
// scripts, which pdf-lib would lay out left to right.
const NEVER_SHOWN =
  /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}]/u;
const INVISIBLE = /[\p{C}\p{Z}\p{M}]/u;

/** The index in TEXT_FONT_FILES of the font that draws a character, or undefined when a sealed PDF cannot show it. */
export function fontIndexFor(character: string): number | undefined {
  if (NEVER_SHOWN.test(character)) return undefined;
  const codePoint = character.codePointAt(0)!;
  let low = 0;
  let high = RANGE_STARTS.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (codePoint < RANGE_STARTS[middle]) high = middle - 1;
    else if (codePoint > RANGE_ENDS[middle]) low = middle + 1;
    else return RANGE_FONTS[middle];
  }
  return undefined;
}

/** A character's code point as Unicode writes it: "U+1F600". */
export const codePointName = (character: string) => `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** "U+0007", and the character before it when it shows on its own: "😀 (U+1F600)". */
const describeCharacter = (character: string) => (INVISIBLE.test(character) ? codePointName(character) : `${character} (${codePointName(character)})`);

const MAX_NAMED = 10;

/** Why text cannot be drawn in a sealed PDF as given (a details predicate naming the characters), or undefined. */
export function undrawableTextProblem(text: string): string | undefined {
  const undrawable = [...new Set(Array.from(text).filter((character) => fontIndexFor(character) === undefined))];
  if (undrawable.length === 0) return undefined;
  const named = undrawable.slice(0, MAX_NAMED).map(describeCharacter).join(', ');
  const more = undrawable.length > MAX_NAMED ? ` and ${undrawable.length - MAX_NAMED} more` : '';
  return `contains characters that cannot be shown in the signed PDF: ${named}${more}`;
}

/** A zod refinement for every string that ends up drawn in the sealed PDF: `.superRefine(drawableInSealedPdf)`. */
export function drawableInSealedPdf(value: string, ctx: z.RefinementCtx) {
  const problem = undrawableTextProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
}
