import fs from 'node:fs';
import { expect } from 'chai';
import fc from 'fast-check';
import fontkit from '@pdf-lib/fontkit';
import { computeFontCoverage, coverageFile } from '../../scripts/fontCoverage';
import { fontIndexFor, TEXT_FONT_FILES, undrawableTextProblem } from '../../src/pdf/drawableText';

// What a sealed PDF can show (issue #24, item 11): one table decides it for validation and for the
// renderer, made from the fonts' own character maps.

describe('drawable text in sealed PDFs', function () {
  this.timeout(60_000);

  it('the committed coverage table is what the installed fonts hold (else: npx tsx scripts/fontCoverage.ts)', () => {
    expect(JSON.parse(fs.readFileSync(coverageFile, 'utf8'))).to.deep.equal(computeFontCoverage());
  });

  it('every character it accepts, of all of Unicode, has a glyph in the font it assigns', () => {
    const fonts = TEXT_FONT_FILES.map((file) => fontkit.create(fs.readFileSync(file)));
    let accepted = 0;
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
      if (codePoint === 0xd800) codePoint = 0xe000; // no lone surrogates
      const index = fontIndexFor(String.fromCodePoint(codePoint));
      if (index === undefined) continue;
      accepted++;
      if (!fonts[index].hasGlyphForCodePoint(codePoint)) expect.fail(`U+${codePoint.toString(16)} has no glyph in ${TEXT_FONT_FILES[index]}`);
    }
    expect(accepted).to.be.greaterThan(15_000);
  });

  it('accepts Latin (ẞ included), Greek, Cyrillic, Chinese and Japanese, and the emoji a font draws', () => {
    for (const text of ['Straße ẞ Zoë Łódź ñ', 'Ωμέγα Ἀθηνᾶ', 'Привет Ёлка', '署名 李小龙 合同', 'こんにちは カタカナ', '😀 ☺ ✓', 'a\u0301 e\u0308']) {
      expect(undrawableTextProblem(text), text).to.equal(undefined);
    }
  });

  it('names what it refuses: emoji no font has, control and format characters, right-to-left scripts', () => {
    expect(undrawableTextProblem('ok 🦄')).to.equal('contains characters that cannot be shown in the signed PDF: 🦄 (U+1F984)');
    expect(undrawableTextProblem('a\u0007b\tc\nd\u200be\u00ad')).to.equal(
      'contains characters that cannot be shown in the signed PDF: U+0007, U+0009, U+000A, U+200B, U+00AD',
    );
    expect(undrawableTextProblem('שלום مرحبا')).to.equal(
      'contains characters that cannot be shown in the signed PDF: ש (U+05E9), ל (U+05DC), ו (U+05D5), ם (U+05DD), م (U+0645), ر (U+0631), ح (U+062D), ب (U+0628), ا (U+0627)',
    );
    expect(undrawableTextProblem('🦄🦄🦄')).to.equal('contains characters that cannot be shown in the signed PDF: 🦄 (U+1F984)');
    const many = Array.from({ length: 12 }, (_, i) => String.fromCodePoint(0xe000 + i)).join('');
    expect(undrawableTextProblem(many)).to.match(/: U\+E000, .*, U\+E009 and 2 more$/);
  });

  it('random Unicode: refused exactly when some character has no font, naming each such character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), (text) => {
        const undrawable = [...new Set(Array.from(text).filter((character) => fontIndexFor(character) === undefined))];
        const problem = undrawableTextProblem(text);
        if (undrawable.length === 0) expect(problem).to.equal(undefined);
        for (const character of undrawable.slice(0, 10))
          expect(problem).to.include(`U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
      }),
      { numRuns: 2_000 },
    );
  });
});
