import crypto from 'node:crypto';
import { dataDirSecret } from '../dataDirSecret';

// Signing links carry a 256-bit token bound to one signer. Only its SHA-256 is stored. The link in
// an e-mail is derived (HMAC of the signer id with a server secret) so a retried e-mail activity sends
// the same link; embedded-signing links are random.

/** What every link token looks like: 32 bytes as base64url, 43 characters. */
export const SIGNING_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

export const randomToken = () => crypto.randomBytes(32).toString('base64url');

export const emailLinkToken = (secret: Buffer, signerId: string) => crypto.createHmac('sha256', secret).update(`signing-link:${signerId}`).digest('base64url');

/** SIGNING_TOKEN_SECRET, else a secret generated once into DATA_DIR. */
export function loadTokenSecret(configured: string | undefined, dataDir: string): Buffer {
  return Buffer.from(configured ?? dataDirSecret(dataDir, 'signing-token.secret'), 'utf8');
}

/** The key signers' verification codes are hashed with, derived from the signing-token secret: a leaked table alone tests no code. */
export const verificationKey = (tokenSecret: Buffer) => crypto.createHmac('sha256', tokenSecret).update('signer-verification').digest();

/** A verification code as stored: an HMAC bound to its signer, so one signer's code is nothing for another. */
export const hashVerificationCode = (key: Buffer, signerId: string, code: string) =>
  crypto.createHmac('sha256', key).update(`${signerId}:${code}`).digest('hex');
