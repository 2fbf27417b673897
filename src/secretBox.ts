import crypto from 'node:crypto';

// Text that must be read back (a webhook's signing secret, a kept answer that may show one) is encrypted
// at rest with AES-256-GCM, never hashed. The key is the caller's: WEBHOOK_SECRET_KEY, or one derived from it.

/** iv.tag.ciphertext, each base64url. */
export function sealText(key: Buffer, text: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')).join('.');
}

/** The text `sealText` sealed; `what` names it in the error said when `key` is not the one it was sealed with. */
export function openText(key: Buffer, sealed: string, what: string): string {
  const [iv, tag, ciphertext] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    // Said plainly for the operator: the usual cause is a process started with another key.
    throw new Error(`cannot decrypt ${what}: WEBHOOK_SECRET_KEY (or DATA_DIR/webhook-secret.key) is not the key it was encrypted with`);
  }
}
