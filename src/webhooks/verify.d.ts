/**
 * True when `signatureHeader` (X-Service-Signature) holds the hex HMAC-SHA256 of `rawBody` keyed with `secret`.
 * During a rotation the header lists two signatures, comma-separated; either may match.
 */
export function verifyWebhook(secret: string, rawBody: string | Buffer, signatureHeader: string | string[] | undefined): boolean;
