import fs from 'node:fs';
import { createRouter } from '../api/router';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Client } from '@temporalio/client';
import type { Context } from 'koa';
import type { Config } from '../config';
import type { Db } from '../db';
import type { EventLog } from '../events/service';
import type { Logger } from '../logger';
import type { File } from 'formidable';
import type { Middleware } from 'koa';
import { jsonBody, jsonOrMultipartBody, receivedFileOf } from '../api/middleware/body';
import type { PdfInspector } from '../pdf/inspect';
import { uploadDirOf } from '../api/receivedFile';
import { MAX_SIGNER_FILE_BYTES, signerFileTypes } from '../pdf/signerFile';
import { MAX_UPLOAD_BYTES_PER_SIGNER, MAX_UPLOADS_PER_SIGNER, receiveSignerUpload } from '../signingRequests/uploads';
import { idParam, routesOn } from '../api/route';
import { storableText, z } from '../api/validation';
import { DeclineSchema, SignerUploadBodySchema, SignerUploadSchema, SignerViewSchema, SignSchema, TokenParams } from './schema';
import { approveRequest } from '../signingRequests/approve';
import { declineRequest } from '../signingRequests/decline';
import { getOriginalDocument } from '../signingRequests/download';
import { assertCanAct, resolveSigningToken } from '../signingRequests/links';
import { signRequest } from '../signingRequests/sign';
import { markViewed, recordPageOpened } from '../signingRequests/view';
import { presentSignerView } from './presenter';
import { AppError, notFound, validationError } from '../errors';
import { formBundle } from './formBundle';
import { linkNotValidPage, setSigningPageHeaders, signingAssetPath, signingAssets, signingPageFor } from './page';
import { findLogo, signerBrandOf } from '../accounts/branding';
import { verificationRequired, verifiedSessions } from './verifiedSession';
import { verificationRoutes } from './verificationRoutes';
import { embedRoutes } from './embedRoutes';

const DocumentParams = TokenParams.extend({ documentId: idParam('document', 'Document') });
const SignerStatusSchema = z.object({ signerId: z.string(), status: z.string() }).openapi('SignerStatus');

/**
 * What a signer's browser (or another front end) calls, authorised by the link token, and for a signer
 * the sender asked to verify, by the session a right code gave this browser: the signer's view of the
 * request, the PDF, and Sign / Decline, which go through the workflow.
 */
export function signerPortalRoutes({
  db,
  events,
  temporal,
  openapi,
  config,
  logger,
  pdf,
  uploadGate,
}: {
  db: Db;
  events: EventLog;
  temporal: Client;
  openapi: OpenAPIRegistry;
  config: Config;
  logger: Logger;
  /** Checks the PDFs signers upload, as every upload is checked. */
  pdf: PdfInspector;
  /** The process's one upload gate, shared with the API's uploads. */
  uploadGate: Middleware;
}) {
  const router = createRouter();
  const route = routesOn({ router, openapi });
  const signerSide = { tag: 'Signing (signer side)', params: TokenParams, servers: [{ url: config.publicUrl }], security: [] };
  // Headers are stored as sent, made storable rather than refused: a signer does not choose their browser's.
  const client = (ctx: Context) => ({ ipAddress: storableText(ctx.ip), userAgent: storableText(ctx.get('User-Agent').slice(0, 500)) || undefined });
  const sessions = verifiedSessions(config);
  // The signer of a link, once verified when the sender asked for it: until then, nothing of the request.
  const resolveVerified = async (ctx: Context, token: string) => {
    const context = await resolveSigningToken(db, token);
    if (context.signer.verification && !sessions.verified(ctx, context, token)) throw verificationRequired();
    return context;
  };
  verificationRoutes({ route, signerSide, db, events, config, logger, sessions, client });

  route(
    {
      ...signerSide,
      method: 'get',
      path: '/sign/{token}/request',
      operationId: 'getSigningPage',
      summary: 'What the signer needs to render the signing page; opening it counts as viewed',
      response: SignerViewSchema,
      responseDescription: 'The signer’s view',
      errors: [404],
    },
    async ({ params }, ctx) => {
      const context = await resolveVerified(ctx, params.token);
      // Best effort, not waited for: the page shows either way.
      recordPageOpened(temporal, context, client(ctx)).catch((error) => logger.warn({ err: error, requestId: context.request.id }, 'could not record a view'));
      ctx.set('Cache-Control', 'no-store');
      return presentSignerView(context);
    },
  );

  // The original PDFs, served only while the signer may act: the first, or any of the request's documents.
  const pdfResponse = { description: 'The PDF', content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } } };
  const serveOriginal = async (ctx: Context, token: string, documentId?: string) => {
    const context = await resolveVerified(ctx, token);
    assertCanAct(context);
    ctx.type = 'application/pdf';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await getOriginalDocument(db, context, documentId);
  };
  route(
    {
      ...signerSide,
      method: 'get',
      path: '/sign/{token}/document',
      operationId: 'downloadDocumentToSign',
      summary: 'The PDF to sign (the first, when there are several)',
      response: pdfResponse,
      errors: [404, 409],
    },
    ({ params }, ctx) => serveOriginal(ctx, params.token),
  );
  route(
    {
      ...signerSide,
      method: 'get',
      path: '/sign/{token}/documents/{documentId}',
      operationId: 'downloadOneDocumentToSign',
      summary: 'One of the PDFs to sign, when the request has several',
      params: DocumentParams,
      response: pdfResponse,
      errors: [404, 409],
    },
    ({ params }, ctx) => serveOriginal(ctx, params.token, params.documentId),
  );

  route(
    {
      ...signerSide,
      method: 'post',
      path: '/sign/{token}/sign',
      operationId: 'sign',
      summary: 'Sign, with consent to sign electronically, a typed or drawn signature and the values of the signer’s fields',
      body: SignSchema,
      parseBody: jsonBody(2 * 1024 * 1024),
      response: SignerStatusSchema,
      responseDescription: 'Signed',
      errors: [400, 404, 409],
    },
    async ({ params, body }, ctx) => {
      const context = await resolveVerified(ctx, params.token);
      await signRequest({ temporal, db }, context, body, client(ctx));
      return { signerId: context.signer.id, status: 'signed' };
    },
  );

  const multipart = jsonOrMultipartBody(MAX_SIGNER_FILE_BYTES, 'file', uploadDirOf(config.dataDir));
  route(
    {
      ...signerSide,
      method: 'post',
      path: '/sign/{token}/uploads',
      operationId: 'uploadSignerFile',
      summary: 'Upload a file for an image or attachment field; its id is then the field’s value in Sign',
      description:
        `The file as the \`file\` part of multipart/form-data, at most ${MAX_SIGNER_FILE_BYTES / 1024 / 1024} MB: a PDF, PNG or JPEG, its type read from its bytes. ` +
        'A PDF is checked as every uploaded document is; an image must be one the sealed PDF can draw. An image field takes a PNG or JPEG, an attachment field any of the three. ' +
        `At most ${MAX_UPLOADS_PER_SIGNER} files and ${MAX_UPLOAD_BYTES_PER_SIGNER / 1024 / 1024} MB in all per signer; only while the signer may act, and only for a signer with an image or attachment field (409).`,
      before: [uploadGate],
      parseBody: multipart,
      requestBody: {
        content: { 'multipart/form-data': { schema: SignerUploadBodySchema, encoding: { file: { contentType: signerFileTypes.join(', ') } } } },
      },
      response: SignerUploadSchema,
      status: 201,
      responseDescription: 'Uploaded',
      errors: [400, 404, 409, 413, 415, 503],
    },
    async ({ params }, ctx) => {
      const context = await resolveVerified(ctx, params.token);
      const part = ctx.request.files?.file;
      const file = (Array.isArray(part) ? part[0] : part) as File | undefined;
      if (!file) throw validationError(['file is required: send the file as the file part of multipart/form-data']);
      return receiveSignerUpload(db, pdf, context, receivedFileOf(file), file.originalFilename);
    },
  );

  route(
    {
      ...signerSide,
      method: 'post',
      path: '/sign/{token}/decline',
      operationId: 'declineToSign',
      summary: 'Decline to sign, with a reason',
      body: DeclineSchema,
      response: SignerStatusSchema,
      responseDescription: 'Declined',
      errors: [400, 404, 409],
    },
    async ({ params, body }, ctx) => {
      const context = await resolveVerified(ctx, params.token);
      await declineRequest(temporal, context, body.reason, client(ctx));
      return { signerId: context.signer.id, status: 'declined' };
    },
  );

  // An approver's and a viewer's part: nothing to send but the link, answered once the workflow has it.
  const partRoute = (path: string, operationId: string, summary: string, status: 'approved' | 'viewed', part: typeof approveRequest) =>
    route(
      { ...signerSide, method: 'post', path, operationId, summary, response: SignerStatusSchema, responseDescription: 'Recorded', errors: [404, 409] },
      async ({ params }, ctx) => {
        const context = await resolveVerified(ctx, params.token);
        await part(temporal, context, client(ctx));
        return { signerId: context.signer.id, status };
      },
    );
  partRoute('/sign/{token}/approve', 'approve', 'Approve, as an approver (who places nothing and may decline instead)', 'approved', approveRequest);
  partRoute('/sign/{token}/viewed', 'markViewed', 'A viewer’s page has shown the documents: the viewer’s step is done', 'viewed', markViewed);

  // --- The signing page (HTML) and its assets. ---
  router.get('/sign/:token', async (ctx) => {
    setSigningPageHeaders(ctx);
    try {
      const { request } = await resolveSigningToken(db, ctx.params.token);
      const brand = await signerBrandOf(db, request.accountId);
      setSigningPageHeaders(ctx, brand);
      ctx.body = signingPageFor(brand);
    } catch (error) {
      if (!(error instanceof AppError && error.status === 404)) throw error;
      ctx.status = 404;
      ctx.body = linkNotValidPage;
    }
  });
  // Accounts' logos, by their SHA-256: an SVG served from here can run nothing, load nothing, and is never
  // taken for anything but an image.
  router.get('/brand-logos/:sha256', async (ctx) => {
    const logo = await findLogo(db, ctx.params.sha256);
    if (!logo) throw notFound('Logo');
    ctx.type = logo.type;
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.body = logo.content;
  });
  embedRoutes(router, db, client);
  router.get(signingAssetPath, async (ctx) => {
    const name = ctx.captures?.[0] ?? '';
    if (name === 'form.mjs') {
      ctx.type = 'text/javascript';
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = await formBundle();
      return;
    }
    if (!Object.hasOwn(signingAssets, name)) return;
    const asset = signingAssets[name];
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = fs.createReadStream(asset.file);
  });

  return router;
}
