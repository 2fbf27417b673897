import crypto from 'node:crypto';
import { dataDirSecret } from '../dataDirSecret';
import { openText, sealText } from '../secretBox';

// Webhook signing secrets must be readable to sign deliveries, so they are encrypted at rest
// (AES-256-GCM), never hashed. The key comes from WEBHOOK_SECRET_KEY, else a file in DATA_DIR.

/** whsec_ + base64 of 32 random bytes: the Standard Webhooks format. */
export const generateWebhookSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;

/** WEBHOOK_SECRET_KEY (64 hex digits), else a key generated once into DATA_DIR. */
export function loadWebhookSecretKey(configured: string | undefined, dataDir: string): Buffer {
  return Buffer.from(configured ?? dataDirSecret(dataDir, 'webhook-secret.key'), 'hex');
}

/** iv.tag.ciphertext, each base64url (src/secretBox.ts). */
export const encryptSecret = (key: Buffer, secret: string): string => sealText(key, secret);

export const decryptSecret = (key: Buffer, sealed: string): string => openText(key, sealed, 'a webhook secret');
