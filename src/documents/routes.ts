import type { Context, Middleware } from 'koa';
import type { File } from 'formidable';
import type { Account } from '../accounts/service';
import { jsonOrMultipartBody, receivedFileOf, withPdfBody } from '../api/middleware/body';
import { receivedFromBytes, removeLeftoverFiles, uploadDirOf } from '../api/receivedFile';
import { attachment, linksById, linkTo, presentPage, routesOn } from '../api/route';
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
import {
  assertDocumentQuota,
  createDocument,
  deleteDocument,
  getDocument,
  getDocumentFile,
  listDocuments,
  renameDocument,
  uploadDocumentFile,
} from './service';

const tag = 'Documents';
const pdfBody = { content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } } };
const documentLinks = {
  ...linksById('getDocument', 'renameDocument', 'deleteDocument', 'uploadDocumentFile', 'downloadDocumentFile'),
  SendForSignature: linkTo('createSigningRequest', {}, { document_id: '$response.body#/id' }),
};

/** The fileName field of a multipart upload (built once: zod's pick() compiles a new schema on every call). */
const UploadFileNameSchema = DocumentUploadSchema.pick({ fileName: true });

/** The fields of a create request, from a JSON body or from a multipart upload. */
async function readCreateInput(ctx: Context) {
  if (!ctx.is('multipart/form-data')) {
    const input = parseInput(DocumentCreateSchema, ctx.request.body);
    return { ...input, content: input.content === undefined ? undefined : receivedFromBytes(Buffer.from(input.content, 'base64')) };
  }
  const fields = ctx.request.body as Record<string, unknown>;
  const part = ctx.request.files?.file;
  const file = (Array.isArray(part) ? part[0] : part) as File | undefined;
  if (!file) throw validationError(['file is required']);
  const { fileName } = parseInput(UploadFileNameSchema, { fileName: fields.fileName ?? file.originalFilename ?? undefined });
  if (!fileName) throw validationError(['fileName is required']);
  return { fileName, fileSize: file.size, content: receivedFileOf(file) };
}

export function documentRoutes({ router, db, events, config, rateLimit, openapi, idempotency, pdf, uploadGate: gate }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const route = routesOn({ router, openapi, idempotency });
  const maxBytes = config.MAX_UPLOAD_BYTES;
  const uploadDir = uploadDirOf(config.dataDir);
  void removeLeftoverFiles(uploadDir); // those of a process killed mid-upload
  // Before the body is read: an account over its quota costs no upload and no parse.
  const quota: Middleware = async (ctx, next) => {
    await assertDocumentQuota(db, account(ctx));
    await next();
  };

  route(
    {
      method: 'post',
      path: '/documents',
      operationId: 'createDocument',
      tag,
      summary: 'Create a document',
      description:
        `JSON with optional base64 content, or multipart/form-data with a file part. At most ${maxBytes} bytes, ${config.PDF_MAX_PAGES} pages and ` +
        `${config.PDF_MAX_OBJECTS} objects. Rate limited per plan; counts against the monthly document quota. The PDF's text is searchable about a second later.`,
      before: [rateLimit('POST /documents'), quota, gate],
      parseBody: jsonOrMultipartBody(maxBytes, 'file', uploadDir),
      requestBody: {
        content: {
          'application/json': { schema: DocumentCreateSchema },
          'multipart/form-data': { schema: DocumentUploadSchema, encoding: { file: { contentType: 'application/pdf' } } },
        },
      },
      status: 201,
      response: DocumentSchema,
      responseDescription: 'Created',
      links: documentLinks,
      errors: [400, 401, 403, 413, 429, 503],
    },
    async (_input, ctx) => presentDocument(await createDocument({ db, events, pdf }, account(ctx), await readCreateInput(ctx))),
  );

  route(
    {
      method: 'get',
      path: '/documents',
      operationId: 'listDocuments',
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
      operationId: 'getDocument',
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
      operationId: 'renameDocument',
      tag,
      summary: 'Rename a document',
      params: DocumentIdParams,
      body: DocumentUpdateSchema,
      response: DocumentSchema,
      responseDescription: 'The document',
      errors: [400, 401, 404],
    },
    async ({ params, body }, ctx) => presentDocument(await renameDocument({ db, events }, account(ctx).id, params.id, body.fileName)),
  );

  route(
    {
      method: 'delete',
      path: '/documents/{id}',
      operationId: 'deleteDocument',
      tag,
      summary: 'Delete a document',
      params: DocumentIdParams,
      status: 204,
      response: { description: 'Deleted' },
      errors: [401, 404, 409],
    },
    async ({ params }, ctx) => {
      await deleteDocument({ db, events }, account(ctx).id, params.id);
    },
  );

  route(
    {
      method: 'put',
      path: '/documents/{id}/file',
      operationId: 'uploadDocumentFile',
      tag,
      summary: 'Upload the PDF of a document created without content',
      params: DocumentIdParams,
      before: [gate],
      requestBody: pdfBody,
      response: DocumentSchema,
      responseDescription: 'The document, now ready',
      errors: [400, 401, 404, 409, 413, 503],
    },
    async ({ params }, ctx) => {
      await getDocument(db, account(ctx).id, params.id); // 404 before reading a body for someone else's document
      const uploaded = await withPdfBody(ctx, maxBytes, uploadDir, (file) => uploadDocumentFile({ db, events, pdf }, account(ctx).id, params.id, file));
      return presentDocument(uploaded);
    },
  );

  route(
    {
      method: 'get',
      path: '/documents/{id}/file',
      operationId: 'downloadDocumentFile',
      tag,
      summary: 'Download the original PDF',
      params: DocumentIdParams,
      response: { description: 'The original PDF', ...pdfBody },
      errors: [401, 404, 409],
    },
    async ({ params }, ctx) => {
      const { document, content } = await getDocumentFile(db, account(ctx).id, params.id);
      ctx.type = 'application/pdf';
      ctx.set('Content-Disposition', attachment(document.fileName));
      ctx.body = content;
    },
  );
}
