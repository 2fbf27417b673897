'use strict';
// `import { verifyWebhook } from 'signet/webhooks'`: how a receiver checks a delivery. Plain JavaScript
// with no dependencies, so it runs in any Node.js receiver without a TypeScript loader.
const crypto = require('node:crypto');

/**
 * True when `signatureHeader` (the X-Service-Signature header) holds the hex HMAC-SHA256 of `rawBody`
 * keyed with `secret`. During a secret rotation the header lists two signatures, comma-separated;
 * either may match. Pass the raw body exactly as received, before any JSON parsing.
 *
 * @param {string} secret the webhook's secret, whsec_…
 * @param {string | Buffer} rawBody
 * @param {string | string[] | undefined} signatureHeader
 * @returns {boolean}
 */
function verifyWebhook(secret, rawBody, signatureHeader) {
  if (typeof secret !== 'string' || !secret || typeof signatureHeader !== 'string') return false;
  const expected = crypto.createHmac('sha256', secret).update(rawBody).digest();
  return signatureHeader.split(',').some((candidate) => {
    const given = Buffer.from(candidate.trim(), 'hex');
    // timingSafeEqual throws on a length mismatch, so compare lengths first (the length is not secret).
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

module.exports = { verifyWebhook };
