import { expect } from 'chai';
import { DEFAULT_BRAND_NAME, displayNameProblem, nameToShow } from '../../src/domain/brand';

const addressRule = 'must not contain @, < or >, or a character like them';

describe('displayNameProblem: what a brand name used as a From name may not be', () => {
  it('refuses the issue’s address-like name, naming the rule and the character', () => {
    expect(displayNameProblem('PayPal Security <security@paypal.com>')).to.equal(`${addressRule} (“<” U+003C): a From name must not read as an e-mail address`);
    expect(displayNameProblem('security@paypal')).to.include(addressRule).and.include('U+0040');
  });

  it('refuses what NFKC folds into @, < or >: fullwidth and small forms', () => {
    for (const character of ['＠', '＜', '＞', '﹫', '﹤', '﹥']) {
      expect(displayNameProblem(`PayPal ${character} Security`), character)
        .to.include(addressRule)
        .and.include(`“${character}”`);
    }
    expect(displayNameProblem('PayPal Security ＜security＠paypal.com＞')).to.include(addressRule);
  });

  it('refuses lookalikes NFKC keeps apart: angle quotation marks and brackets, arrowheads, syllabics, a circled a', () => {
    for (const character of [...'‹›«»〈〉《》⟨⟩⟪⟫❮❯❬❭❰❱⧼⧽⦑⦒˂˃˱˲ᐸᐳᚲ≺≻≪≫⋖⋗⋘⋙⪡⪢ⓐⒶ𝈶𝈷𖼿', '〈', '〉', '︿', '﹀']) {
      expect(displayNameProblem(`PayPal ${character}security${character}`), `U+${character.codePointAt(0)!.toString(16)}`).to.include(addressRule);
    }
    // < followed by a combining solidus is composed into ≮ by NFKC: the < as given is refused.
    expect(displayNameProblem('PayPal <\u0338')).to.include(addressRule);
  });

  it('refuses a domain name, also with fullwidth or ideographic dots or an invisible character in it', () => {
    for (const name of [
      'paypal.com',
      'Security paypal.co.uk',
      'secure.paypal.com team',
      'paypal．com',
      'paypal。com',
      'paypal\u200b.com',
      'ｐａｙｐａｌ.ｃｏｍ',
    ]) {
      expect(displayNameProblem(name), name).to.match(/^must not look like a domain name \(“.+”\): a From name must not read as an e-mail address$/);
    }
  });

  it('refuses a mark that changes the direction of text', () => {
    expect(displayNameProblem('Acme \u202eslaP')).to.equal('must not contain a character that changes the direction of text (U+202E)');
    expect(displayNameProblem('Acme \u2066x\u2069')).to.include('U+2066');
  });

  it('takes ordinary names in any script, with dots, quotes, dashes and emoji', () => {
    for (const name of [
      'Acme Rentals',
      'Acme Co.',
      'J. P. Morgan & Co.',
      'St. Louis Realty',
      'Müller & Söhne GmbH',
      'O’Brien "Best" Lettings',
      'Acme v2.0',
      'Acme — Leith',
      '株式会社アクメ',
      'Агентство Недвижимости',
      'شركة أكمي',
      '👩‍💻 Dev Rentals',
      DEFAULT_BRAND_NAME,
    ]) {
      expect(displayNameProblem(name), name).to.equal(undefined);
    }
  });
});

describe('nameToShow', () => {
  it('is the brand’s name, or Signet’s when there is none or it breaks the rule (a row stored before it)', () => {
    expect(nameToShow('Acme Rentals')).to.equal('Acme Rentals');
    expect(nameToShow(null)).to.equal(DEFAULT_BRAND_NAME);
    expect(nameToShow('PayPal Security <security@paypal.com>')).to.equal(DEFAULT_BRAND_NAME);
    expect(nameToShow('paypal.com')).to.equal(DEFAULT_BRAND_NAME);
  });
});
