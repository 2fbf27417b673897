import crypto from 'node:crypto';

/** X-Service-Signature: lowercase hex HMAC-SHA256 of the exact body text, keyed with the secret as shown to the owner. */
export const hexSignature = (secret: string, body: string) => crypto.createHmac('sha256', secret).update(body).digest('hex');

/** Standard Webhooks: base64 HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed with the base64-decoded part after whsec_. */
export const standardSignature = (secret: string, id: string, timestamp: number, body: string) =>
  crypto
    .createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');

/**
 * The signature headers of one delivery attempt. `secrets` is the current secret, then the previous one
 * while a rotation's grace period lasts: each header then lists one signature per secret.
 */
export function signatureHeaders(secrets: string[], eventId: string, body: string, now = new Date()) {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'X-Service-Signature': secrets.map((secret) => hexSignature(secret, body)).join(','),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => `v1,${standardSignature(secret, eventId, timestamp, body)}`).join(' '),
  };
}
