import fs from 'node:fs';
import Router from '@koa/router';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Client } from '@temporalio/client';
import type { Context } from 'koa';
import type { Config } from '../config';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { jsonBody } from '../api/middleware/body';
import { jsonContent as json, pickErrors } from '../api/openapi';
import { parseInput, z } from '../api/validation';
import { runUpdate } from '../signatures/service';
import { signatureImageProblem } from '../pdf/signatureImage';
import { signingRequestHandle } from '../temporal/client';
import { DeclineSchema, SignerViewSchema, SignSchema } from './schema';
import { assertCanAct, getOriginalPdf, presentSignerView, resolveSigningToken } from './service';
import { AppError, validationError } from '../errors';
import { linkNotValidPage, setSigningPageHeaders, signingAssetPath, signingAssets, signingPage } from './page';

const TokenParams = z.object({ token: z.string().openapi({ description: 'The token of the signing link.' }) });
const SignerStatusSchema = z.object({ signerId: z.string(), status: z.string() }).openapi('SignerStatus');

/**
 * What a signer's browser (or another front end) calls, authorised by the link token alone:
 * the signer's view of the request, the PDF, and Sign / Decline, which go through the workflow.
 */
export function signingRoutes({ db, temporal, openapi, config, logger }: { db: Db; temporal: Client; openapi: OpenAPIRegistry; config: Config; logger: Logger }) {
  const router = new Router({ prefix: '/sign/:token' });
  const servers = [{ url: config.publicUrl }];
  const client = (ctx: Context) => ({ ipAddress: ctx.ip, userAgent: ctx.get('User-Agent').slice(0, 500) || undefined });
  type Route = Parameters<OpenAPIRegistry['registerPath']>[0];
  const describe = (method: 'get' | 'post', path: string, summary: string, extra: Pick<Route, 'request' | 'responses'>) =>
    openapi.registerPath({ method, path: `/sign/{token}${path}`, tags: ['Signing (signer side)'], summary, servers, security: [], ...extra });

  describe('get', '/request', 'What the signer needs to render the signing page; opening it counts as viewed', {
    request: { params: TokenParams },
    responses: { 200: { description: 'The signer’s view', ...json(SignerViewSchema) }, ...pickErrors(404) },
  });
  router.get('/request', async (ctx) => {
    const context = await resolveSigningToken(db, ctx.params.token);
    if (context.request.status === 'pending' && ['pending', 'notified'].includes(context.signer.status)) {
      // Best effort: the page shows either way; the workflow records the view once.
      signingRequestHandle(temporal, context.request.id)
        .viewed({ signerId: context.signer.id, ...client(ctx) })
        .catch((error) => logger.warn({ err: error, requestId: context.request.id }, 'could not record a view'));
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = presentSignerView(context);
  });

  describe('get', '/document', 'The PDF to sign', {
    request: { params: TokenParams },
    responses: { 200: { description: 'The PDF', content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } } }, ...pickErrors(404, 409) },
  });
  router.get('/document', async (ctx) => {
    const context = await resolveSigningToken(db, ctx.params.token);
    assertCanAct(context);
    ctx.type = 'application/pdf';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await getOriginalPdf(db, context.request.documentId);
  });

  describe('post', '/sign', 'Sign, with consent to sign electronically and a typed or drawn signature', {
    request: { params: TokenParams, body: json(SignSchema) },
    responses: { 200: { description: 'Signed', ...json(SignerStatusSchema) }, ...pickErrors(400, 404, 409) },
  });
  router.post('/sign', jsonBody(2 * 1024 * 1024), async (ctx) => {
    const context = await resolveSigningToken(db, ctx.params.token);
    const input = parseInput(SignSchema, ctx.request.body);
    // Checked now, not at sealing: a signature that cannot be drawn would leave the request unsealable.
    if (input.signature.type === 'drawn') {
      const problem = await signatureImageProblem(input.signature.value);
      if (problem) throw validationError([`signature.value ${problem}`]);
    }
    assertCanAct(context);
    await runUpdate(() => signingRequestHandle(temporal, context.request.id).sign({ signerId: context.signer.id, signature: input.signature, fieldValues: input.fieldValues, ...client(ctx) }));
    ctx.body = { signerId: context.signer.id, status: 'signed' };
  });

  describe('post', '/decline', 'Decline to sign, with a reason', {
    request: { params: TokenParams, body: json(DeclineSchema) },
    responses: { 200: { description: 'Declined', ...json(SignerStatusSchema) }, ...pickErrors(400, 404, 409) },
  });
  router.post('/decline', jsonBody(), async (ctx) => {
    const context = await resolveSigningToken(db, ctx.params.token);
    const { reason } = parseInput(DeclineSchema, ctx.request.body);
    assertCanAct(context);
    await runUpdate(() => signingRequestHandle(temporal, context.request.id).decline({ signerId: context.signer.id, reason, ...client(ctx) }));
    ctx.body = { signerId: context.signer.id, status: 'declined' };
  });

  // --- The signing page (HTML) and its assets. RegExp paths are not prefixed, so /sign-assets/… stays at the root. ---
  router.get('/', async (ctx) => {
    setSigningPageHeaders(ctx);
    try {
      await resolveSigningToken(db, ctx.params.token);
      ctx.body = signingPage;
    } catch (error) {
      if (!(error instanceof AppError && error.status === 404)) throw error;
      ctx.status = 404;
      ctx.body = linkNotValidPage;
    }
  });
  router.get(signingAssetPath, (ctx) => {
    const name = ctx.captures?.[0] ?? '';
    if (!Object.hasOwn(signingAssets, name)) return;
    const asset = signingAssets[name];
    ctx.type = asset.type;
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = fs.createReadStream(asset.file);
  });

  return router;
}
