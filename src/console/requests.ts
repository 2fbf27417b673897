import type { Context } from 'koa';
import { attachment, idParam, parsePathParams } from '../api/route';
import { parseInput, z } from '../api/validation';
import { listDocuments } from '../documents/service';
import { MAX_FIELDS_PER_SIGNER, MAX_SIGNERS } from '../documents/fields';
import { AppError, validationError } from '../errors';
import { SearchQuerySchema } from '../search/schema';
import { searchAccount } from '../search/service';
import { getSigningRequestDetail } from '../signingRequests/detail';
import { presentSigningRequest } from '../signingRequests/presenter';
import { CancelSchema, SigningRequestCreateSchema, SigningRequestListQuerySchema } from '../signingRequests/schema';
import { cancelSigningRequest } from '../signingRequests/cancel';
import { createSigningRequest } from '../signingRequests/create';
import { signingDepsFrom } from '../signingRequests/deps';
import { getSealedDocument, getSealedDocuments } from '../signingRequests/download';
import { remindSigners } from '../signingRequests/remind';
import { findAuditTrail, listSigningRequests } from '../signingRequests/store';
import { getTemplate, listTemplates } from '../templates/service';
import type { Template } from '../templates/store';
import { consoleWording } from './problems';
import * as pages from './requestPages';
import type { ConsoleKit } from './kit';

const IdParams = z.object({ id: idParam('signingRequest', 'Signing request') });
const TemplateIdParams = z.object({ id: idParam('template', 'Template') });
const DocumentIdParams = z.object({ documentId: idParam('document', 'Document') });
const LIST_LIMIT = 100;

// The form's field names, as the person reads them in a problem ("signers.1.email …" → "Signer 2 e-mail …").
const fieldLabels: Record<string, string> = {
  document_id: 'Document',
  template_id: 'Template',
  title: 'Title',
  message: 'Message',
  signingOrder: 'Signing order',
  expiresInDays: 'Expiry (days)',
  reminderEveryDays: 'Reminder interval (days)',
  name: 'name',
  email: 'e-mail',
  recipientType: 'part',
  routingOrder: 'step',
  role: 'role',
  textTags: 'Text tags',
  verification: 'verification',
  'verification.code': 'access code',
  'verification.method': 'verification',
};

/** The signing-request pages: the same services and schemas as /api/v1/signatures, with a session instead of a key. */
export function requestPages({ router, deps, rateLimit, requireLogin, frame, page, account, form, seeOther }: ConsoleKit) {
  const { db, events, config, search, temporal } = deps;
  // Made once (the verification key reads the data directory's secret); the public URL read at request
  // time: with PORT=0 it is settled only once the server listens.
  const signing = signingDepsFrom({ db, events, temporal, textTags: deps.textTags, config });
  const signingDeps = () => ({ ...signing, publicUrl: config.publicUrl });

  // A path id that cannot exist is a 404, before any query (as on the REST API).
  const requestId = (ctx: Context) => parsePathParams(IdParams, ctx.params).id;
  const templateOf = (ctx: Context, id: string) => getTemplate(db, account(ctx).id, parsePathParams(TemplateIdParams, { id }).id);

  // --- The list: newest first, or search hits when there is search text ---
  router.get('/requests', requireLogin, async (ctx) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    const status = typeof ctx.query.status === 'string' ? ctx.query.status : '';
    const view = { q, status, requests: [] as pages.RequestView[], hasMore: false, problems: [] as string[] };
    try {
      const filter = { status: status || undefined, limit: String(LIST_LIMIT) };
      if (q) {
        const found = await searchAccount({ db, search }, account(ctx).id, parseInput(SearchQuerySchema, { ...filter, q, type: 'signing_request' }));
        view.requests = found.data as unknown as pages.RequestView[];
        view.hasMore = found.pagination.hasMore;
      } else {
        const found = await listSigningRequests(db, account(ctx).id, parseInput(SigningRequestListQuerySchema, filter));
        view.requests = found.data.map((record) => presentSigningRequest(record));
        view.hasMore = found.hasMore;
      }
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return page(ctx, pages.requestsPage(frame(ctx, '/app/requests'), { ...view, problems: error.details ?? [error.message] }), error.status);
    }
    page(ctx, pages.requestsPage(frame(ctx, '/app/requests'), view));
  });

  // --- The send form: a document, or a template (?template=tpl_…) with a signer per role ---
  const sendForm = async (ctx: Context, values: Record<string, string>, template?: Template, problems: string[] = [], status = 200) => {
    const [documents, templates] = await Promise.all([
      listDocuments(db, account(ctx).id, { limit: LIST_LIMIT, status: 'ready' }),
      template ? { data: [] } : listTemplates(db, account(ctx).id, { limit: LIST_LIMIT }),
    ]);
    page(ctx, pages.sendPage(frame(ctx, '/app/requests'), { documents: documents.data, templates: templates.data, template, values, problems }), status);
  };

  // ?template= is the template picker's; the document view and a template's preview link with ?documentId= and ?templateId=.
  router.get('/requests/new', requireLogin, async (ctx) => {
    const template = ctx.query.template ?? ctx.query.templateId;
    const document = ctx.query.document ?? ctx.query.documentId;
    await sendForm(
      ctx,
      typeof document === 'string' ? { document_id: document } : {},
      typeof template === 'string' && template ? await templateOf(ctx, template) : undefined,
    );
  });

  router.post('/requests', requireLogin, rateLimit('POST /signatures'), async (ctx) => {
    const values = form(ctx);
    // A template that cannot be found is reported by createSigningRequest, as the API reports it.
    const template = values.template_id ? await templateOf(ctx, values.template_id).catch(() => undefined) : undefined;
    const { input, rows, fieldNumbers, problems } = requestInput(values, template);
    try {
      if (problems.length) throw validationError(problems);
      const created = await createSigningRequest(signingDeps(), account(ctx), parseInput(SigningRequestCreateSchema, input));
      seeOther(ctx, `/app/requests/${created.request.id}`);
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      await sendForm(
        ctx,
        values,
        template,
        (error.details ?? [error.message]).map((problem) => consoleWording(problem) ?? readable(problem, rows, fieldNumbers)),
        error.status,
      );
    }
  });

  // --- One request ---
  router.get('/requests/:id', requireLogin, async (ctx) => {
    // Its recipients, progress and audit trail from one read: the page never shows a signer not yet
    // e-mailed beside their own invitation_sent step.
    const { steps, ...found } = await getSigningRequestDetail({ db, temporal }, account(ctx).id, requestId(ctx));
    const reminded = Number(ctx.query.reminded);
    const notice =
      Number.isInteger(reminded) && reminded >= 0 && ctx.query.reminded !== undefined ? `Reminded ${reminded} signer${reminded === 1 ? '' : 's'}.` : undefined;
    page(ctx, pages.requestPage(frame(ctx, '/app/requests'), { request: presentSigningRequest(found), steps, notice }));
  });

  router.post('/requests/:id/remind', requireLogin, async (ctx) => {
    const id = requestId(ctx);
    const { remindedSignerIds } = await remindSigners(signingDeps(), account(ctx), id);
    seeOther(ctx, `/app/requests/${id}?reminded=${remindedSignerIds.length}`);
  });

  router.post('/requests/:id/cancel', requireLogin, async (ctx) => {
    const id = requestId(ctx);
    const { reason } = parseInput(CancelSchema, { reason: form(ctx).reason?.trim() || undefined });
    await cancelSigningRequest(signingDeps(), account(ctx).id, id, reason);
    seeOther(ctx, `/app/requests/${id}`);
  });

  router.get('/requests/:id/document', requireLogin, async (ctx) => {
    const { content, fileName, type } = await getSealedDocuments(db, account(ctx).id, requestId(ctx));
    ctx.type = type;
    ctx.set('Content-Disposition', attachment(fileName));
    ctx.body = content;
  });

  router.get('/requests/:id/documents/:documentId', requireLogin, async (ctx) => {
    const documentId = parsePathParams(DocumentIdParams, { documentId: ctx.params.documentId }).documentId;
    const { content, fileName } = await getSealedDocument(db, account(ctx).id, requestId(ctx), documentId);
    ctx.type = 'application/pdf';
    ctx.set('Content-Disposition', attachment(fileName));
    ctx.body = content;
  });

  router.get('/requests/:id/audit-trail.json', requireLogin, async (ctx) => {
    const id = requestId(ctx);
    const steps = await findAuditTrail(db, account(ctx).id, id);
    ctx.type = 'application/json';
    ctx.set('Content-Disposition', `attachment; filename="audit-trail-${id}.json"`);
    ctx.body = { data: steps.map((step) => ({ ...step, at: step.at.toISOString() })) };
  });
}

/** The fields placed on the send form's pages (requestFields.js): each the API's field, with its signer's row number (1 is the first). */
const PlacedFieldsSchema = z.array(z.looseObject({ signer: z.number().int().min(1).max(MAX_SIGNERS) })).max(MAX_SIGNERS * MAX_FIELDS_PER_SIGNER);

/** The placed fields posted as JSON in `fields` (none when it is empty); undefined when they cannot be read. The API's schema checks the rest of each. */
function placedFields(json: string | undefined) {
  if (!json?.trim()) return [];
  try {
    const parsed = PlacedFieldsSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The API's request body from the form: signer rows left empty are skipped (the page shows a few), and
 * `rows` maps each signer sent back to its row on the page; each placed field goes to its row's signer,
 * and `fieldNumbers` maps it back to its number on the page. Numbers stay strings when they are not
 * numbers, so the schema names the problem; `problems` are the form's own.
 */
function requestInput(values: Record<string, string>, template?: Template) {
  const number = (value: string | undefined) => (value?.trim() ? (Number.isFinite(Number(value)) ? Number(value) : value) : undefined);
  const indexes = [...new Set(Object.keys(values).flatMap((key) => /^signers-(\d{1,2})-(name|email)$/.exec(key)?.[1] ?? []))].map(Number).sort((a, b) => a - b);
  const rows = indexes.filter((index) => values[`signers-${index}-name`]?.trim() || values[`signers-${index}-email`]?.trim());
  const placed = placedFields(values.fields);
  const problems = placed ? [] : ['The fields placed on the pages could not be read: place them again.'];
  const fieldsOf = rows.map((): Record<string, unknown>[] => []);
  const fieldNumbers = rows.map((): number[] => []);
  placed?.forEach(({ signer, ...field }, index) => {
    const at = rows.indexOf(signer - 1);
    if (at === -1) return void problems.push(`Field ${index + 1} is for signer ${signer}, whose row is empty`);
    fieldsOf[at].push({ ...field, ...(values.document_id ? { document_id: values.document_id } : {}) });
    fieldNumbers[at].push(index + 1);
  });
  const signers = rows.map((index, at) => {
    const role = values[`signers-${index}-role`]?.trim();
    const recipientType = values[`signers-${index}-recipientType`];
    const routingOrder = number(values[`signers-${index}-routingOrder`]);
    const method = values[`signers-${index}-verification`];
    const verification = method === 'access_code' ? { method, code: values[`signers-${index}-accessCode`] ?? '' } : method ? { method } : undefined;
    return {
      name: values[`signers-${index}-name`]?.trim() ?? '',
      email: values[`signers-${index}-email`]?.trim() ?? '',
      ...(role ? { role } : {}),
      ...(recipientType && recipientType !== 'signer' ? { recipientType } : {}),
      ...(routingOrder !== undefined ? { routingOrder } : {}),
      ...(verification ? { verification } : {}),
      ...(fieldsOf[at].length ? { fields: fieldsOf[at] } : {}),
    };
  });
  const prefill = Object.fromEntries(
    (template ? pages.prefillableFields(template) : []).flatMap((field, index) => {
      const value = values[`prefill-${index}`]?.trim();
      if (!value) return [];
      return [[field.label!, field.type === 'checkbox' ? value === 'true' : value]];
    }),
  );
  // More documents than the first make a request of several: documents, in the form's order, with empty rows skipped.
  const more = Object.keys(values)
    .flatMap((key) => /^documents-(\d{1,2})$/.exec(key)?.[1] ?? [])
    .map(Number)
    .sort((a, b) => a - b)
    .map((index) => values[`documents-${index}`])
    .filter(Boolean);
  const source = values.template_id
    ? { template_id: values.template_id }
    : more.length
      ? { documents: [values.document_id, ...more].map((id) => ({ document_id: id })) }
      : { document_id: values.document_id || undefined };
  return {
    input: {
      ...source,
      title: values.title ?? '',
      message: values.message?.trim() || undefined,
      signers,
      ...(Object.keys(prefill).length ? { prefill } : {}),
      ...(values.template_id ? {} : { textTags: values.textTags || undefined }),
      signingOrder: values.signingOrder ?? 'parallel',
      expiresInDays: number(values.expiresInDays),
      reminderEveryDays: number(values.reminderEveryDays),
    },
    rows,
    fieldNumbers,
    problems,
  };
}

/** A problem of the API's body in the form's words: "signers.0.email must …" → "Signer 1 e-mail must …", "signers.0.fields.1 …" → "Field 2 …". */
function readable(problem: string, rows: number[], fieldNumbers: number[][]) {
  return problem
    .replace(/^signers\.(\d+)\.fields\.(\d+)(?:\.(\w+))?/, (whole, signer: string, field: string, key?: string) => {
      const placed = fieldNumbers[Number(signer)]?.[Number(field)];
      return placed ? `Field ${placed}${key ? ` ${key}` : ''}` : whole;
    })
    .replace(/^documents\.(\d+)\.document_id/, (_, index: string) => `Document ${Number(index) + 1}`)
    .replace(/^documents /, 'Documents ')
    .replace(
      /^signers\.(\d+)\.(\w+(?:\.\w+)?)/,
      (_, index: string, field: string) => `Signer ${(rows[Number(index)] ?? Number(index)) + 1} ${fieldLabels[field] ?? field}`,
    )
    .replace(/^(\w+)(?= )/, (field: string) => fieldLabels[field] ?? field);
}
