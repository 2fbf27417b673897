import crypto from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { isCanonicalPath } from '../../src/api/middleware/canonicalPath';
import { loggablePath } from '../../src/logger';
import { newId } from '../../src/ids';

const segment = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
const canonicalPaths = fc.array(segment, { minLength: 1, maxLength: 5 }).map((segments) => `/${segments.join('/')}`);

describe('isCanonicalPath', () => {
  it('accepts the paths our routes have, with or without a trailing slash', () => {
    const token = crypto.randomBytes(32).toString('base64url');
    for (const path of [
      '/',
      '/healthz',
      '/docs/swagger-ui.css',
      `/api/v1/documents/${newId('document')}`,
      `/sign/${token}/request`,
      '/app/password/reset/x',
      '/sign-assets/signing.js',
      "/api/v1/webhooks/'%20or%201=1--",
      '/api/v1/documents/doc_%00',
      '/app/',
    ]) {
      expect(isCanonicalPath(path), path).to.equal(true);
    }
    fc.assert(fc.property(canonicalPaths, fc.boolean(), (path, trailing) => isCanonicalPath(trailing ? `${path}/` : path)));
  });

  it('refuses empty and dot segments, backslashes, encoded slashes and unreserved characters, and broken escapes', () => {
    const hostile = fc.constantFrom('', '.', '..', '%2e', '%2E%2e', 'a%2Fb', 'a%2fb', 'a%5Cb', 'a%5cb', 'a\\b', '%61', '%7E', '%', '%4', '%zz', 'a%2');
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 4 }), hostile, fc.nat(), (segments, piece, at) => {
        const spliced = [...segments];
        spliced.splice(at % (segments.length + 1), 0, piece);
        const path = `/${spliced.join('/')}`;
        // An empty piece last is a trailing slash, which is allowed.
        if (piece === '' && at % (segments.length + 1) === segments.length) return true;
        return !isCanonicalPath(path) && !isCanonicalPath(`${path}/x`);
      }),
    );
    for (const path of ['//dev/mail', 'dev/mail', '*', '/dev/mail//', '/dev\\mail']) expect(isCanonicalPath(path), path).to.equal(false);
  });
});

describe('loggablePath', () => {
  const token = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64url'));
  /** The token with some of its characters percent-encoded, as a client may send it. */
  const spelled = (text: string, encode: boolean[]) =>
    [...text].map((char, i) => (encode[i] ? `%${char.charCodeAt(0).toString(16).toUpperCase()}` : char)).join('');
  const pieceOf = (text: string) => Array.from({ length: text.length - 11 }, (_, i) => text.slice(i, i + 12));

  it('shows no part of a link token, wherever it is and however it is spelled', () => {
    const templates = [
      '/sign/T',
      '/sign/T/request',
      '/SIGN/T/sign',
      '//sign/T',
      '/sign//T',
      '/app/password/reset/T',
      '/app/verify-email/T',
      '/x/T/y?z=1',
      '/sign/a%2FT',
      '/p?token=T',
      '/p?x=1&token=T',
    ];
    fc.assert(
      fc.property(token, fc.constantFrom(...templates), fc.array(fc.boolean(), { minLength: 43, maxLength: 43 }), (secret, template, encode) => {
        const logged = loggablePath(template.replace('T', spelled(secret, encode)));
        return pieceOf(secret).every((piece) => !logged.includes(piece)) && logged.includes('[redacted]');
      }),
    );
  });

  it('redacts whatever follows /sign/, /embed/ or /reset/, even a token too short to be one', () => {
    expect(loggablePath('/sign/abc/request')).to.equal('/sign/[redacted]/request');
    expect(loggablePath('/embed/abc')).to.equal('/embed/[redacted]');
    expect(loggablePath('/app/password/reset/abc')).to.equal('/app/password/reset/[redacted]');
  });

  it('keeps the paths that carry no secret, ids included', () => {
    const id = newId('account');
    for (const path of [
      '/healthz',
      `/api/v1/signatures/${newId('signingRequest')}/signers/${newId('signer')}/link`,
      `/app/documents/${id}`,
      '/sign-assets/signing.js',
      '/api/v1/documents/',
    ]) {
      expect(loggablePath(path)).to.equal(path);
    }
  });
});
