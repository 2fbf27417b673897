import type { Db } from '../db';
import { validationError } from '../errors';
import { text, VISIBLE_CHARACTER, z } from '../api/validation';
import { displayNameProblem, mailBrandOf, nameToShow, type MailBrand, type SignerBrand } from '../domain/brand';
import { checkLogo, decodeLogo, MAX_LOGO_BYTES, MAX_LOGO_SIDE, type Logo, type LogoType } from './logo';
import { getAccount } from './service';
import { findBrandRow, findLogoBySha256, upsertBrand, type BrandRow } from './store';

// An account's brand: its name, logo, accent colour, e-mail footer and support address, shown to signers
// in place of Signet's. One service for the REST API (PATCH /account/branding) and the console's settings.

/** WCAG 2.1 AA for normal text (success criterion 1.4.3): white on the colour, and the colour on white. */
export const MIN_CONTRAST = 4.5;
const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;
// Control characters (NUL among them) have no place in a name or a line of an e-mail.
const NO_CONTROL = /^[^\u0000-\u001f\u007f-\u009f]*$/;
// Both rules as one JSON Schema pattern: no control character, and at least one visible one.
const LINE_PATTERN = `^[^\\u0000-\\u001f\\u007f-\\u009f]*${VISIBLE_CHARACTER.source}[^\\u0000-\\u001f\\u007f-\\u009f]*$`;

/** The relative luminance of a #rrggbb colour, as WCAG 2.1 defines it. */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const channel = parseInt(hex.slice(at, at + 2), 16) / 255;
    return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The contrast ratio of a #rrggbb colour against white (1 to 21). */
export const contrastWithWhite = (hex: string) => 1.05 / (relativeLuminance(hex) + 0.05);

const line = (max: number) =>
  text(max)
    .refine((value) => NO_CONTROL.test(value), { error: 'must not contain control characters' })
    .refine((value) => VISIBLE_CHARACTER.test(value), { error: 'must not be blank (null clears it)' })
    .trim()
    .openapi({ maxLength: max, pattern: LINE_PATTERN });

const accentColor = z
  .string()
  .regex(HEX_COLOUR, { error: 'must be a colour as #rrggbb' })
  .refine((hex) => contrastWithWhite(hex) >= MIN_CONTRAST, {
    error: ({ input }) =>
      `must have a contrast ratio of at least ${MIN_CONTRAST}:1 against white (WCAG 2.1 AA for text, success criterion 1.4.3): ` +
      `${String(input)} has ${contrastWithWhite(String(input)).toFixed(2)}:1; choose a darker colour`,
  })
  .openapi({ pattern: HEX_COLOUR.source, example: '#1d4ed8' });

// base64 of at most MAX_LOGO_BYTES, with room for a data: URL's prefix.
const MAX_LOGO_TEXT = Math.ceil(MAX_LOGO_BYTES / 3) * 4 + 32;

export const BrandingUpdateSchema = z
  .object({
    name: line(100)
      .refine((value) => displayNameProblem(value) === undefined, { error: ({ input }) => displayNameProblem(String(input)) })
      .nullable()
      .optional()
      .openapi({
        description:
          'Shown to signers in place of “Signet”, on pages and as the From name of e-mails: no @, < or >, nor a character like them (＠, ‹, 〈…), ' +
          'and no domain name, since many mail clients show only that name.',
        example: 'Acme Rentals',
      }),
    logo: z
      .string()
      .max(MAX_LOGO_TEXT, { error: `must be at most ${MAX_LOGO_BYTES / 1024} KB` })
      .nullable()
      .optional()
      .openapi({
        description:
          `A PNG (at most ${MAX_LOGO_SIDE} × ${MAX_LOGO_SIDE} pixels) or an SVG, at most ${MAX_LOGO_BYTES / 1024} KB, as base64 or as a data: URL ` +
          '(data:image/png;base64,…). An SVG is rebuilt from shapes, text, gradients, clips and masks: scripts, event handlers, style sheets, ' +
          'foreignObject, images, links and every reference outside the file are removed. Many mail clients show no SVG: a PNG shows everywhere.',
      }),
    accentColor: accentColor
      .nullable()
      .optional()
      .openapi({
        description: `Buttons and links on the signing page and in e-mails: #rrggbb with a contrast of at least ${MIN_CONTRAST}:1 against white (WCAG 2.1 AA).`,
      }),
    emailFooter: line(500).nullable().optional().openapi({ description: 'The closing line of every e-mail to signers, in place of “Sent by Signet”.' }),
    supportEmail: z
      .string()
      .max(320)
      .regex(z.regexes.email, { error: 'must be a valid e-mail address' })
      .nullable()
      .optional()
      .openapi({ description: 'Shown to signers as where to write with questions.', example: 'help@acme.example' }),
  })
  .openapi('BrandingUpdate', { description: 'Each field given is set; null clears it; a field left out keeps its value.' });

export const BrandingSchema = z
  .object({
    name: z.string().nullable(),
    logo: z
      .object({
        url: z.string().openapi({ description: 'On this service’s own origin; the address changes with the logo.' }),
        contentType: z.enum(['image/png', 'image/svg+xml']),
        size: z.number().int(),
        sha256: z.string(),
      })
      .nullable(),
    accentColor: z.string().nullable(),
    emailFooter: z.string().nullable(),
    supportEmail: z.string().nullable(),
    updatedAt: z.string().nullable().openapi({ format: 'date-time', description: 'null: never set.' }),
  })
  .openapi('Branding');

export type BrandingUpdate = z.output<typeof BrandingUpdateSchema>;

export interface AccountBrand {
  name: string | null;
  logo: { type: LogoType; size: number; sha256: string } | null;
  accentColor: string | null;
  emailFooter: string | null;
  supportEmail: string | null;
  updatedAt: Date | null;
}

const toBrand = (row: BrandRow | undefined): AccountBrand => ({
  name: row?.name ?? null,
  logo: row?.logo_sha256 ? { type: row.logo_type!, size: Number(row.logo_size), sha256: row.logo_sha256 } : null,
  accentColor: row?.accent_color ?? null,
  emailFooter: row?.email_footer ?? null,
  supportEmail: row?.support_email ?? null,
  updatedAt: row?.updated_at ?? null,
});

export async function getBranding(db: Db, accountId: string): Promise<AccountBrand> {
  return toBrand(await findBrandRow(db, accountId));
}

/** Sets the fields given (null clears one); the logo is checked (PNG) or sanitized (SVG) first, 400 otherwise. */
export async function updateBranding(db: Db, accountId: string, input: BrandingUpdate): Promise<AccountBrand> {
  let logo: Logo | null | undefined = input.logo === null ? null : undefined;
  if (typeof input.logo === 'string') {
    const decoded = decodeLogo(input.logo);
    const checked = typeof decoded === 'string' ? decoded : checkLogo(decoded);
    if (typeof checked === 'string') throw validationError([checked]);
    logo = checked;
  }
  const changes: Record<string, unknown> = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.accentColor !== undefined ? { accent_color: input.accentColor?.toLowerCase() ?? null } : {}),
    ...(input.emailFooter !== undefined ? { email_footer: input.emailFooter } : {}),
    ...(input.supportEmail !== undefined ? { support_email: input.supportEmail } : {}),
    ...(logo !== undefined ? { logo: logo?.content ?? null, logo_type: logo?.type ?? null, logo_sha256: logo?.sha256 ?? null } : {}),
  };
  if (Object.keys(changes).length > 0) await upsertBrand(db, accountId, changes);
  return getBranding(db, accountId);
}

/** Where a logo is served: this origin, under its SHA-256, so its address changes with it. */
export const logoPath = (sha256: string) => `/brand-logos/${sha256}`;

/** A stored logo by its SHA-256, to serve. */
export async function findLogo(db: Db, sha256: string): Promise<{ type: LogoType; content: Buffer } | undefined> {
  if (!/^[0-9a-f]{64}$/.test(sha256)) return undefined;
  return findLogoBySha256(db, sha256);
}

/** The brand as signers see it: Signet's when the account set none. */
export async function signerBrandOf(db: Db, accountId: string): Promise<SignerBrand> {
  return toSignerBrand(await getBranding(db, accountId));
}

/** The brand of an account's e-mails to signers, with its address when verified, which every one of them shows. */
export async function mailBrandOfAccount(db: Db, accountId: string, publicUrl: string): Promise<MailBrand> {
  const [brand, account] = await Promise.all([signerBrandOf(db, accountId), getAccount(db, accountId)]);
  return mailBrandOf(brand, publicUrl, account.emailVerified ? account.email : null);
}

/** Each field the account set in place of Signet's; Signet's for the others, and for a name a From name may not be. */
export function toSignerBrand(brand: AccountBrand): SignerBrand {
  return {
    name: nameToShow(brand.name),
    logoPath: brand.logo ? logoPath(brand.logo.sha256) : null,
    accentColor: brand.accentColor,
    emailFooter: brand.emailFooter,
    supportEmail: brand.supportEmail,
  };
}

export function presentBranding(brand: AccountBrand, publicUrl: string) {
  return {
    name: brand.name,
    logo: brand.logo
      ? { url: `${publicUrl}${logoPath(brand.logo.sha256)}`, contentType: brand.logo.type, size: brand.logo.size, sha256: brand.logo.sha256 }
      : null,
    accentColor: brand.accentColor,
    emailFooter: brand.emailFooter,
    supportEmail: brand.supportEmail,
    updatedAt: brand.updatedAt?.toISOString() ?? null,
  };
}
