import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { z } from '../api/validation';

// scrypt (memory-hard) from node:crypto: 2^15 × 8 × 128 bytes = 32 MiB per hash, a fresh 16-byte salt each time.
const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>;
const COST = 2 ** 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 200;

/** A new password, as the sign-up form's rule has it: a reset's, an invitee's. */
export const NewPasswordSchema = z.object({ password: z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH) });

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url: the parameters travel with the hash, so they can grow later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LENGTH, { N: COST, r: BLOCK_SIZE, p: PARALLELISM, maxmem: MAX_MEMORY });
  return ['scrypt', COST, BLOCK_SIZE, PARALLELISM, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Compares in constant time; a malformed or missing hash never matches. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? '').split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: MAX_MEMORY });
  return crypto.timingSafeEqual(actual, expected);
}

// A real hash of a random password: a login for an unknown e-mail costs the same scrypt as a known one.
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hashPassword(crypto.randomBytes(16).toString('hex')));
