import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import type { RouteDeps } from '../api/routeDeps';
import { attachment, idParam, linksById, linkTo, listOf, presentPage, routesOn } from '../api/route';
import { idempotentId } from '../api/middleware/idempotency';
import { z } from '../api/validation';
import { presentSigningRequest } from './presenter';
import {
  AuditStepSchema,
  CancelSchema,
  EmbeddedSigningCreateSchema,
  EmbeddedSigningSchema,
  SigningRequestCreateSchema,
  SigningRequestListQuerySchema,
  SigningRequestSchema,
} from './schema';
import { cancelSigningRequest } from './cancel';
import { createSigningRequest } from './create';
import { signingDepsFrom } from './deps';
import { getSealedDocument, getSealedDocuments } from './download';
import { createEmbeddedSigningLink } from './embed';
import { getSigningRequest } from './get';
import { createSigningLink } from './links';
import { remindSigners } from './remind';
import { findAuditTrail, listSigningRequests } from './store';
import { findRequestUpload } from './uploads';
import { signerFileTypes } from '../pdf/signerFile';

const IdParams = z.object({ id: idParam('signingRequest', 'Signing request') });
const SignerParams = IdParams.extend({ signerId: idParam('signer', 'Signer') });
const DocumentParams = IdParams.extend({ documentId: idParam('document', 'Document') });
const UploadParams = IdParams.extend({ uploadId: idParam('upload', 'Upload') });
const tag = 'Signing requests';
const signingRequestLinks = {
  ...linksById('getSigningRequest', 'cancelSigningRequest', 'remindSigners', 'getAuditTrail', 'downloadSealedDocument'),
  CreateSigningLink: linkTo('createSigningLink', { id: '$response.body#/id', signerId: '$response.body#/signers/0/id' }),
  CreateEmbeddedSigningSession: linkTo('createEmbeddedSigningSession', { id: '$response.body#/id', signerId: '$response.body#/signers/0/id' }),
};

export function signingRequestRoutes({ router, db, events, config, rateLimit, openapi, idempotency, temporal, textTags }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const deps = signingDepsFrom({ db, events, temporal, textTags, config });
  const route = routesOn({ router, openapi, idempotency });

  route(
    {
      method: 'post',
      path: '/signatures',
      operationId: 'createSigningRequest',
      tag,
      summary: 'Send a document to one or more signers',
      description:
        'Rate limited per plan. The invitations sent at once (every signer’s; the first signer’s in sequential order) count against the plan’s e-mails an hour (free 100, pro 1,000, business 10,000): 429 when they do not fit.',
      body: SigningRequestCreateSchema,
      before: [rateLimit('POST /signatures')],
      status: 201,
      response: SigningRequestSchema,
      responseDescription: 'Created; invitations are on their way',
      links: signingRequestLinks,
      errors: [400, 401, 404, 409, 429],
    },
    // Under an Idempotency-Key, the request's id (and so its workflow's) is derived from the key: a retry never makes a second.
    async ({ body }, ctx) => presentSigningRequest(await createSigningRequest(deps, account(ctx), body, { requestId: idempotentId(ctx, 'signingRequest') })),
  );

  route(
    {
      method: 'get',
      path: '/signatures',
      operationId: 'listSigningRequests',
      tag,
      summary: 'List signing requests, newest first',
      query: SigningRequestListQuerySchema,
      response: listOf(SigningRequestSchema).openapi('SigningRequestList'),
      responseDescription: 'A page of signing requests',
      errors: [400, 401],
    },
    async ({ query }, ctx) => presentPage(await listSigningRequests(db, account(ctx).id, query), query.limit, presentSigningRequest),
  );

  route(
    {
      method: 'get',
      path: '/signatures/{id}',
      operationId: 'getSigningRequest',
      tag,
      summary: 'A signing request with the live status of each signer and where it stands (progress)',
      params: IdParams,
      response: SigningRequestSchema,
      responseDescription: 'The signing request',
      errors: [401, 404],
    },
    async ({ params }, ctx) => presentSigningRequest(await getSigningRequest(deps, account(ctx).id, params.id)),
  );

  route(
    {
      method: 'post',
      path: '/signatures/{id}/cancel',
      operationId: 'cancelSigningRequest',
      tag,
      summary: 'Cancel a pending signing request',
      params: IdParams,
      body: CancelSchema,
      response: SigningRequestSchema,
      responseDescription: 'Cancelled',
      errors: [400, 401, 404, 409],
    },
    async ({ params, body }, ctx) => presentSigningRequest(await cancelSigningRequest(deps, account(ctx).id, params.id, body.reason)),
  );

  route(
    {
      method: 'post',
      path: '/signatures/{id}/remind',
      operationId: 'remindSigners',
      tag,
      summary: 'E-mail the signers whose turn it is again',
      description:
        'A signer gets at most one e-mail with their link an hour, the invitation and scheduled reminders included, and every e-mail ' +
        'counts against the plan’s e-mails an hour (free 100, pro 1,000, business 10,000). The signers who may have one now are ' +
        'reminded and named. When none may, 429 rate_limit_exceeded with Retry-After and X-RateLimit-*: Limit 1 when every signer ' +
        'had an e-mail within the hour, the plan’s e-mails an hour when none is left.',
      params: IdParams,
      response: z.object({ remindedSignerIds: z.array(z.string()) }),
      responseDescription: 'Who was reminded',
      errors: [401, 404, 409, 429],
    },
    ({ params }, ctx) => remindSigners(deps, account(ctx), params.id),
  );

  route(
    {
      method: 'get',
      path: '/signatures/{id}/audit-trail',
      operationId: 'getAuditTrail',
      tag,
      summary: 'Every step of the request: who, what, when, from which IP and browser',
      params: IdParams,
      response: z.object({ data: z.array(AuditStepSchema) }),
      responseDescription: 'The audit trail, oldest first',
      errors: [401, 404],
    },
    async ({ params }, ctx) => ({ data: (await findAuditTrail(db, account(ctx).id, params.id)).map((step) => ({ ...step, at: step.at.toISOString() })) }),
  );

  route(
    {
      method: 'get',
      path: '/signatures/{id}/document',
      operationId: 'downloadSealedDocument',
      tag,
      summary: 'The sealed PDF, once every signer has signed; a ZIP of every sealed PDF when the request has several documents',
      params: IdParams,
      response: {
        description: 'The sealed PDF, or a ZIP archive of the sealed PDFs in the documents’ order',
        content: {
          'application/pdf': { schema: z.string().openapi({ format: 'binary' }) },
          'application/zip': { schema: z.string().openapi({ format: 'binary' }) },
        },
      },
      errors: [401, 404, 409],
    },
    async ({ params }, ctx) => {
      const { content, fileName, type } = await getSealedDocuments(db, account(ctx).id, params.id);
      ctx.type = type;
      ctx.set('Content-Disposition', attachment(fileName));
      ctx.body = content;
    },
  );

  route(
    {
      method: 'get',
      path: '/signatures/{id}/documents/{documentId}',
      operationId: 'downloadOneSealedDocument',
      tag,
      summary: 'One document’s sealed PDF, once every signer has signed',
      params: DocumentParams,
      response: { description: 'The sealed PDF', content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } } },
      errors: [401, 404, 409],
    },
    async ({ params }, ctx) => {
      const { content, fileName } = await getSealedDocument(db, account(ctx).id, params.id, params.documentId);
      ctx.type = 'application/pdf';
      ctx.set('Content-Disposition', attachment(fileName));
      ctx.body = content;
    },
  );

  route(
    {
      method: 'get',
      path: '/signatures/{id}/uploads/{uploadId}',
      operationId: 'downloadSignerUpload',
      tag,
      summary: 'A file a signer uploaded for an image or attachment field, once they signed with it',
      description: 'The id is the field’s filled.value.id. The file as the signer uploaded it; its SHA-256 is on the certificate of completion.',
      params: UploadParams,
      response: {
        description: 'The file',
        content: Object.fromEntries(signerFileTypes.map((type) => [type, { schema: z.string().openapi({ format: 'binary' }) }])),
      },
      errors: [401, 404],
    },
    async ({ params }, ctx) => {
      const { upload, content } = await findRequestUpload(db, account(ctx).id, params.id, params.uploadId);
      ctx.type = upload.contentType;
      ctx.set('Content-Disposition', attachment(upload.fileName));
      // Served as a download, never run: a PDF or image from a signer is not the API's to show.
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      ctx.body = content;
    },
  );

  route(
    {
      method: 'post',
      path: '/signatures/{id}/signers/{signerId}/link',
      operationId: 'createSigningLink',
      tag,
      summary: 'A fresh signing link for one signer (embedded signing)',
      params: SignerParams,
      response: z.object({ url: z.string(), expiresAt: z.string() }),
      responseDescription: 'The link',
      errors: [401, 404, 409],
    },
    ({ params }, ctx) => createSigningLink(deps, account(ctx).id, params.id, params.signerId),
  );

  route(
    {
      method: 'post',
      path: '/signatures/{id}/signers/{signerId}/embed',
      operationId: 'createEmbeddedSigningSession',
      tag,
      summary: 'A one-time URL of the signer’s page, to frame in your own page on the origins you name (embedded signing)',
      description:
        'The URL is used once, within expiresInSeconds: a GET of it uses nothing up (a link preview or a load outside a frame is harmless); ' +
        'the page, once framed, posts back to it, and that first post starts a session of this signer on this request alone, which the page ' +
        'keeps in memory; used again it answers 410 link_expired, naming nothing of the request. The page may be framed only by allowedOrigins (Content-Security-Policy ' +
        'frame-ancestors) and posts messages to its parent on the origin that frames it, never to any other: ' +
        '{source: "signet", version: 1, type, signingRequestId, signerId}, type one of signet.signing.ready, .viewed, .completed, .declined, ' +
        '.verification_required, .expired, .error. Only for a signer whose turn it is on a pending request (409 otherwise). ' +
        'Origins and returnUrl are https (http://localhost or http://127.x.x.x too, except with NODE_ENV=production).',
      params: SignerParams,
      body: EmbeddedSigningCreateSchema,
      status: 201,
      response: EmbeddedSigningSchema,
      responseDescription: 'The URL, and until when it may be opened',
      errors: [400, 401, 404, 409],
    },
    ({ params, body }, ctx) => createEmbeddedSigningLink(deps, account(ctx).id, params.id, params.signerId, body),
  );
}
