import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// Signing links carry a 256-bit token bound to one signer. Only its SHA-256 is stored. The link in
// an e-mail is derived (HMAC of the signer id with a server secret) so a retried e-mail activity sends
// the same link; embedded-signing links are random.

export const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

export const randomToken = () => crypto.randomBytes(32).toString('base64url');

export const emailLinkToken = (secret: Buffer, signerId: string) =>
  crypto.createHmac('sha256', secret).update(`signing-link:${signerId}`).digest('base64url');

/** SIGNING_TOKEN_SECRET, else a secret generated once into DATA_DIR (mode 0600). */
export function loadTokenSecret(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  const file = path.join(dataDir, 'signing-token.secret');
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'utf8');
}
