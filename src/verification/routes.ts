import fs from 'node:fs';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type Router from '@koa/router';
import type { File } from 'formidable';
import type { Context, Middleware } from 'koa';
import { jsonOrMultipartBody, receivedFileOf, withPdfBody } from '../api/middleware/body';
import type { RateLimit } from '../api/middleware/rateLimit';
import { routesOn } from '../api/route';
import { createRouter } from '../api/router';
import { z } from '../api/validation';
import type { Config } from '../config';
import type { Db } from '../db';
import { validationError } from '../errors';
import type { PdfInspector } from '../pdf/inspect';
import { setVerifyPageHeaders, verifyAssetPath, verifyAssets, verifyPage } from './page';
import { VerificationSchema, VerifyUploadSchema } from './schema';
import { sealFingerprintOf, verifyPdf, type PdfInMemory } from './service';

export interface VerificationRouteDeps {
  /** The REST API's router: the route goes there before its API key check, as it needs none. */
  router: Router;
  openapi: OpenAPIRegistry;
  db: Db;
  config: Config;
  rateLimit: RateLimit;
  uploadGate: Middleware;
  pdf: PdfInspector;
}

/** The file of a multipart body (already read into memory) or of a raw application/pdf body, in memory. */
async function withFile<T>(ctx: Context, maxBytes: number, use: (file: PdfInMemory) => Promise<T>): Promise<T> {
  const inMemory = (file: { sha256: string; bytes?: Buffer }) => use({ sha256: file.sha256, bytes: file.bytes ?? Buffer.alloc(0) });
  if (!ctx.is('multipart/form-data')) return withPdfBody(ctx, maxBytes, undefined, inMemory);
  const part = ctx.request.files?.file;
  const file = (Array.isArray(part) ? part[0] : part) as File | undefined;
  if (!file) throw validationError(['file is required']);
  return inMemory(receivedFileOf(file));
}

/**
 * Public verification: POST /api/v1/verify, with no API key, answers what Signet can say of a PDF; the
 * page at /verify does it in a browser. The file is read into memory (at most MAX_UPLOAD_BYTES), checked
 * in the PDF inspector's child processes, and forgotten: never written, never logged.
 */
export function verificationRoutes({ router, openapi, db, config, rateLimit, uploadGate, pdf }: VerificationRouteDeps) {
  const route = routesOn({ router, openapi });
  const maxBytes = config.MAX_UPLOAD_BYTES;
  const deps = { db, pdf, sealFingerprint: sealFingerprintOf(config) };
  const multipart = jsonOrMultipartBody(maxBytes, 'file', undefined);

  route(
    {
      method: 'post',
      path: '/verify',
      operationId: 'verifyPdf',
      tag: 'Verification',
      summary: 'Verify a PDF: is it one Signet sealed, unchanged?',
      description:
        `No API key. The PDF as the body (application/pdf) or as the file part of multipart/form-data, at most ${maxBytes} bytes; it is checked ` +
        `under the same limits as an upload and never stored. Its PKCS#7 signatures are checked, each one's byte range against the whole file, ` +
        `its certificate against Signet's seal, and the file's SHA-256 against the PDFs Signet sealed. ` +
        `Rate limited to ${config.VERIFY_REQUESTS_PER_HOUR} requests per hour per client address.`,
      security: [],
      before: [rateLimit.perClientAddress('POST /verify', config.VERIFY_REQUESTS_PER_HOUR), uploadGate],
      parseBody: (ctx, next) => (ctx.is('multipart/form-data') ? multipart(ctx, next) : next()),
      requestBody: {
        content: {
          'application/pdf': { schema: z.string().openapi({ format: 'binary' }) },
          'multipart/form-data': { schema: VerifyUploadSchema, encoding: { file: { contentType: 'application/pdf' } } },
        },
      },
      response: VerificationSchema,
      responseDescription: 'What Signet can say of the PDF',
      errors: [400, 413, 429, 503],
    },
    async (_input, ctx) => {
      ctx.set('Cache-Control', 'no-store');
      return withFile(ctx, maxBytes, (file) => verifyPdf(deps, file));
    },
  );
}

/** The page at /verify and its assets. */
export function verificationPageRoutes() {
  const router = createRouter();
  router.get('/verify', (ctx) => {
    setVerifyPageHeaders(ctx);
    ctx.body = verifyPage;
  });
  router.get(verifyAssetPath, (ctx) => {
    const name = ctx.captures?.[0] ?? '';
    if (!Object.hasOwn(verifyAssets, name)) return;
    const asset = verifyAssets[name];
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = fs.createReadStream(asset.file);
  });
  return router;
}
