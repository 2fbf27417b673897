import type { Middleware } from 'koa';
import { unsupportedMediaType } from '../../errors';

// What co-body (through inflation) decodes, and so what JSON and urlencoded form bodies may carry. A
// list of codings ("gzip, br") is none of these: it is refused, not half decoded.
const DECODED = new Set(['gzip', 'deflate', 'br']);

/**
 * One rule for a request body's Content-Encoding, before any parser reads it: identity anywhere; gzip,
 * deflate or br for JSON and urlencoded forms, which are decoded (a body that does not decode is a 400,
 * see requestContext.ts); anything else is a 415. Multipart and raw PDF bodies are read as they come,
 * undecoded, so an encoding on them would be taken for the bytes themselves.
 */
export function contentEncoding(): Middleware {
  return async (ctx, next) => {
    const encoding = ctx.get('Content-Encoding');
    const hasBody = Boolean(ctx.request.length || ctx.get('Transfer-Encoding'));
    if (hasBody && encoding && encoding !== 'identity') {
      const decoded = DECODED.has(encoding) && ctx.is('application/json', 'application/x-www-form-urlencoded');
      if (!decoded)
        throw unsupportedMediaType('This Content-Encoding is not accepted here: send the body uncompressed, or JSON and forms as gzip, deflate or br.');
    }
    await next();
  };
}
