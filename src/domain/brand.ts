// An account's brand as signers see it: on the signing page, its verification and every e-mail to them.

/** The name signers see when the account has set none. */
export const DEFAULT_BRAND_NAME = 'Signet';

export interface SignerBrand {
  /** In place of "Signet"; the default when unset. */
  name: string;
  /** The logo's path on this service's own origin (/brand-logos/<sha256>); e-mails put the public URL before it. */
  logoPath: string | null;
  /** #rrggbb with at least 4.5:1 against white: white text on it, and it on white, can be read. */
  accentColor: string | null;
  emailFooter: string | null;
  supportEmail: string | null;
}

export const defaultBrand: SignerBrand = {
  name: DEFAULT_BRAND_NAME,
  logoPath: null,
  accentColor: null,
  emailFooter: null,
  supportEmail: null,
};

// @, < and >, and what is drawn like them but NFKC keeps apart (it folds ＠ ＜ ＞ ﹫ ﹤ ﹥ into them): the
// confusables Unicode lists for < and > (˂ ᐸ ᚲ ‹ ❮ 𝈶 and their mirrors), the other single and double
// angle brackets and quotation marks, and a circled a, which NFKC turns into a plain one.
const ADDRESS_LIKE = new Set([...'@<>«»‹›˂˃˱˲ᐸᐳᚲ❮❯❬❭❰❱〈〉《》⟨⟩⟪⟫⦑⦒⧼⧽≺≻≪≫⋖⋗⋘⋙⪡⪢ⓐⒶ𝈶𝈷𖼿']);
const addressLike = (character: string) => [character, ...character.normalize('NFKC')].some((each) => ADDRESS_LIKE.has(each));
// Marks that make a client draw text in another order than it is stored.
const DIRECTION_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
// Labels joined by dots, the last one letters only (com, co.uk, рф): paypal.com, security.paypal.com.
const DOMAIN_LIKE = /[\p{L}\p{N}-]+(?:[.\u3002][\p{L}\p{N}-]+)*[.\u3002]\p{L}{2,}(?![\p{L}\p{N}-])/u;

const codePointOf = (character: string) => `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why `name` cannot be the From name of an e-mail, or undefined when it can. Many mail clients show only
 * that name, so it must not read as an address: no @, < or > nor a character drawn like them, in the name
 * as given or after NFKC; no domain name; no mark that reorders the text around it.
 */
export function displayNameProblem(name: string): string | undefined {
  const reordering = DIRECTION_CONTROL.exec(name);
  if (reordering) return `must not contain a character that changes the direction of text (${codePointOf(reordering[0])})`;
  const lookalike = [...name].find(addressLike);
  if (lookalike)
    return `must not contain @, < or >, or a character like them (“${lookalike}” ${codePointOf(lookalike)}): a From name must not read as an e-mail address`;
  // Invisible characters (a zero-width space) could otherwise split a domain that still shows whole.
  const domain = DOMAIN_LIKE.exec(name.normalize('NFKC').replace(/\p{Default_Ignorable_Code_Point}/gu, ''));
  if (domain) return `must not look like a domain name (“${domain[0]}”): a From name must not read as an e-mail address`;
  return undefined;
}

/** The name signers see: the brand's, or Signet's when it has none or one that breaks displayNameProblem (stored before the rule). */
export const nameToShow = (name: string | null) => (name !== null && displayNameProblem(name) === undefined ? name : DEFAULT_BRAND_NAME);

/** A brand as an e-mail shows it: its logo at an absolute URL, since a mail client has no origin. */
export interface MailBrand {
  name: string;
  /** The From name of e-mails to signers, in place of MAIL_FROM's: the brand's name, when it has one. */
  fromName: string | null;
  logoUrl: string | null;
  accentColor: string | null;
  emailFooter: string | null;
  supportEmail: string | null;
  /** The sending account's e-mail address, when verified; null when it is not. */
  verifiedSender: string | null;
}

/** A name that may not be a From name (stored before the rule) is Signet's, in From as in the text. */
export function mailBrandOf({ logoPath, ...brand }: SignerBrand, publicUrl: string, verifiedSender: string | null): MailBrand {
  const name = nameToShow(brand.name);
  return {
    ...brand,
    name,
    fromName: name === DEFAULT_BRAND_NAME ? null : name,
    logoUrl: logoPath ? `${publicUrl}${logoPath}` : null,
    verifiedSender,
  };
}
