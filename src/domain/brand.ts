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
