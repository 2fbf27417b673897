import fs from 'node:fs/promises';
import type { Context } from 'koa';
import type { File } from 'formidable';
import type { Account } from '../accounts/service';
import { jsonOrMultipartBody, readPdfBody } from '../api/middleware/body';
import { uploadGate } from '../api/middleware/uploadGate';
import { presentPage, routesOn } from '../api/route';
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

const tag = 'Documents';
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

export function documentRoutes({ router, db, config, rateLimit, openapi }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const route = routesOn(router, openapi);
  const maxBytes = config.MAX_UPLOAD_BYTES;
  // One gate for both upload routes: together they process at most MAX_CONCURRENT_UPLOADS large bodies.
  const gate = uploadGate(config.MAX_CONCURRENT_UPLOADS);

  route(
    {
      method: 'post',
      path: '/documents',
      tag,
      summary: 'Create a document',
      description: `JSON with optional base64 content, or multipart/form-data with a file part. At most ${maxBytes} bytes. Rate limited per plan; counts against the monthly document quota.`,
      before: [rateLimit('POST /documents'), gate],
      parseBody: jsonOrMultipartBody(maxBytes),
      requestBody: { content: { 'application/json': { schema: DocumentCreateSchema }, 'multipart/form-data': { schema: DocumentUploadSchema } } },
      status: 201,
      response: DocumentSchema,
      responseDescription: 'Created',
      errors: [400, 401, 403, 413, 429],
    },
    async (_input, ctx) => presentDocument(await createDocument({ db }, account(ctx), await readCreateInput(ctx))),
  );

  route(
    {
      method: 'get',
      path: '/documents',
      tag,
      summary: 'List documents, newest first',
      query: DocumentListQuerySchema,
      response: DocumentListSchema,
      responseDescription: 'A page of documents',
      errors: [400, 401],
    },
    async ({ query }, ctx) => presentPage(await listDocuments(db, account(ctx).id, query), query.limit, presentDocument),
  );

  route(
    {
      method: 'get',
      path: '/documents/{id}',
      tag,
      summary: 'Retrieve a document',
      params: DocumentIdParams,
      response: DocumentSchema,
      responseDescription: 'The document',
      errors: [401, 404],
    },
    async ({ params }, ctx) => presentDocument(await getDocument(db, account(ctx).id, params.id)),
  );

  route(
    {
      method: 'patch',
      path: '/documents/{id}',
      tag,
      summary: 'Rename a document',
      params: DocumentIdParams,
      body: DocumentUpdateSchema,
      response: DocumentSchema,
      responseDescription: 'The document',
      errors: [400, 401, 404],
    },
    async ({ params, body }, ctx) => presentDocument(await renameDocument({ db }, account(ctx).id, params.id, body.fileName)),
  );

  route(
    {
      method: 'delete',
      path: '/documents/{id}',
      tag,
      summary: 'Delete a document',
      params: DocumentIdParams,
      status: 204,
      response: { description: 'Deleted' },
      errors: [401, 404, 409],
    },
    async ({ params }, ctx) => {
      await deleteDocument({ db }, account(ctx).id, params.id);
    },
  );

  route(
    {
      method: 'put',
      path: '/documents/{id}/file',
      tag,
      summary: 'Upload the PDF of a document created without content',
      params: DocumentIdParams,
      before: [gate],
      requestBody: pdf,
      response: DocumentSchema,
      responseDescription: 'The document, now ready',
      errors: [400, 401, 404, 409, 413],
    },
    async ({ params }, ctx) => {
      await getDocument(db, account(ctx).id, params.id); // 404 before reading a body for someone else's document
      const content = await readPdfBody(ctx, maxBytes);
      return presentDocument(await uploadDocumentFile({ db }, account(ctx).id, params.id, content));
    },
  );

  route(
    {
      method: 'get',
      path: '/documents/{id}/file',
      tag,
      summary: 'Download the original PDF',
      params: DocumentIdParams,
      response: { description: 'The original PDF', ...pdf },
      errors: [401, 404, 409],
    },
    async ({ params }, ctx) => {
      const { document, content } = await getDocumentFile(db, account(ctx).id, params.id);
      ctx.type = 'application/pdf';
      ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(document.fileName)}`);
      ctx.body = content;
    },
  );
}
