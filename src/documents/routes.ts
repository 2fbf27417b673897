import fs from 'node:fs/promises';
import type { Context } from 'koa';
import type { File } from 'formidable';
import type { Account } from '../accounts/service';
import { jsonOrMultipartBody, jsonBody, readPdfBody } from '../api/middleware/body';
import { uploadGate } from '../api/middleware/uploadGate';
import { jsonContent as json, pickErrors } from '../api/openapi';
import type { RouteDeps } from '../api/routeDeps';
import { parseInput, z } from '../api/validation';
import { validationError } from '../errors';
import { presentDocument } from './presenter';
import {
  DocumentCreateSchema,
  DocumentIdParams,
  DocumentListQuerySchema,
  DocumentListSchema,
  DocumentSchema,
  DocumentUpdateSchema,
  DocumentUploadSchema,
} from './schema';
import { createDocument, deleteDocument, getDocument, getDocumentFile, listDocuments, renameDocument, uploadDocumentFile } from './service';

const pdf = { content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } } };

/** The fields of a create request, from a JSON body or from a multipart upload. */
async function readCreateInput(ctx: Context) {
  if (!ctx.is('multipart/form-data')) {
    const input = parseInput(DocumentCreateSchema, ctx.request.body);
    return { ...input, content: input.content === undefined ? undefined : Buffer.from(input.content, 'base64') };
  }
  const fields = ctx.request.body as Record<string, unknown>;
  const part = ctx.request.files?.file;
  const file = (Array.isArray(part) ? part[0] : part) as File | undefined;
  if (!file) throw validationError(['file is required']);
  const { fileName } = parseInput(DocumentUploadSchema.pick({ fileName: true }), { fileName: fields.fileName ?? file.originalFilename ?? undefined });
  if (!fileName) throw validationError(['fileName is required']);
  return { fileName, fileSize: file.size, content: await fs.readFile(file.filepath) };
}

export function documentRoutes({ router, db, config, rateLimit, openapi, events }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const maxBytes = config.MAX_UPLOAD_BYTES;
  // One gate for both upload routes: together they process at most MAX_CONCURRENT_UPLOADS large bodies.
  const gate = uploadGate(config.MAX_CONCURRENT_UPLOADS);

  openapi.registerPath({
    method: 'post',
    path: '/documents',
    tags: ['Documents'],
    summary: 'Create a document',
    description: `JSON with optional base64 content, or multipart/form-data with a file part. At most ${maxBytes} bytes. Rate limited per plan; counts against the monthly document quota.`,
    request: { body: { content: { 'application/json': { schema: DocumentCreateSchema }, 'multipart/form-data': { schema: DocumentUploadSchema } } } },
    responses: { 201: { description: 'Created', ...json(DocumentSchema) }, ...pickErrors(400, 401, 403, 413, 429) },
  });
  router.post('/documents', rateLimit('POST /documents'), gate, jsonOrMultipartBody(maxBytes), async (ctx) => {
    const document = await createDocument({ db, events }, account(ctx), await readCreateInput(ctx));
    ctx.status = 201;
    ctx.body = presentDocument(document);
  });

  openapi.registerPath({
    method: 'get',
    path: '/documents',
    tags: ['Documents'],
    summary: 'List documents, newest first',
    request: { query: DocumentListQuerySchema },
    responses: { 200: { description: 'A page of documents', ...json(DocumentListSchema) }, ...pickErrors(400, 401) },
  });
  router.get('/documents', async (ctx) => {
    const query = parseInput(DocumentListQuerySchema, ctx.query);
    const page = await listDocuments(db, account(ctx).id, query);
    ctx.body = { data: page.data.map(presentDocument), pagination: { limit: query.limit, hasMore: page.hasMore, nextCursor: page.nextCursor } };
  });

  openapi.registerPath({
    method: 'get',
    path: '/documents/{id}',
    tags: ['Documents'],
    summary: 'Retrieve a document',
    request: { params: DocumentIdParams },
    responses: { 200: { description: 'The document', ...json(DocumentSchema) }, ...pickErrors(401, 404) },
  });
  router.get('/documents/:id', async (ctx) => {
    ctx.body = presentDocument(await getDocument(db, account(ctx).id, ctx.params.id));
  });

  openapi.registerPath({
    method: 'patch',
    path: '/documents/{id}',
    tags: ['Documents'],
    summary: 'Rename a document',
    request: { params: DocumentIdParams, body: json(DocumentUpdateSchema) },
    responses: { 200: { description: 'The document', ...json(DocumentSchema) }, ...pickErrors(400, 401, 404) },
  });
  router.patch('/documents/:id', jsonBody(), async (ctx) => {
    const { fileName } = parseInput(DocumentUpdateSchema, ctx.request.body);
    ctx.body = presentDocument(await renameDocument({ db, events }, account(ctx).id, ctx.params.id, fileName));
  });

  openapi.registerPath({
    method: 'delete',
    path: '/documents/{id}',
    tags: ['Documents'],
    summary: 'Delete a document',
    request: { params: DocumentIdParams },
    responses: { 204: { description: 'Deleted' }, ...pickErrors(401, 404, 409) },
  });
  router.delete('/documents/:id', async (ctx) => {
    await deleteDocument({ db, events }, account(ctx).id, ctx.params.id);
    ctx.status = 204;
  });

  openapi.registerPath({
    method: 'put',
    path: '/documents/{id}/file',
    tags: ['Documents'],
    summary: 'Upload the PDF of a document created without content',
    request: { params: DocumentIdParams, body: pdf },
    responses: { 200: { description: 'The document, now ready', ...json(DocumentSchema) }, ...pickErrors(400, 401, 404, 409, 413) },
  });
  router.put('/documents/:id/file', gate, async (ctx) => {
    await getDocument(db, account(ctx).id, ctx.params.id); // 404 before reading a body for someone else's document
    const content = await readPdfBody(ctx, maxBytes);
    ctx.body = presentDocument(await uploadDocumentFile({ db, events }, account(ctx).id, ctx.params.id, content));
  });

  openapi.registerPath({
    method: 'get',
    path: '/documents/{id}/file',
    tags: ['Documents'],
    summary: 'Download the original PDF',
    request: { params: DocumentIdParams },
    responses: { 200: { description: 'The original PDF', ...pdf }, ...pickErrors(401, 404, 409) },
  });
  router.get('/documents/:id/file', async (ctx) => {
    const { document, content } = await getDocumentFile(db, account(ctx).id, ctx.params.id);
    ctx.type = 'application/pdf';
    ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(document.fileName)}`);
    ctx.body = content;
  });
}
