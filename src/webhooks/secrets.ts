import crypto from 'node:crypto';
import { dataDirSecret } from '../dataDirSecret';

// Webhook signing secrets must be readable to sign deliveries, so they are encrypted at rest
// (AES-256-GCM), never hashed. The key comes from WEBHOOK_SECRET_KEY, else a file in DATA_DIR.

/** whsec_ + base64 of 32 random bytes: the Standard Webhooks format. */
export const generateWebhookSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;

/** WEBHOOK_SECRET_KEY (64 hex digits), else a key generated once into DATA_DIR. */
export function loadWebhookSecretKey(configured: string | undefined, dataDir: string): Buffer {
  return Buffer.from(configured ?? dataDirSecret(dataDir, 'webhook-secret.key'), 'hex');
}

/** iv.tag.ciphertext, each base64url. */
export function encryptSecret(key: Buffer, secret: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')).join('.');
}

export function decryptSecret(key: Buffer, sealed: string): string {
  const [iv, tag, ciphertext] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    // Said plainly for the operator: the usual cause is a process started with another key.
    throw new Error('cannot decrypt a webhook secret: WEBHOOK_SECRET_KEY (or DATA_DIR/webhook-secret.key) is not the key it was encrypted with');
  }
}
