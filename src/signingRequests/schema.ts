import { dateTime, jsonSchemaKeywords, laterThan, paginationQuery, queryDate, text, VISIBLE_CHARACTER, visibleText, z } from '../api/validation';

import { drawableInSealedPdf } from '../pdf/drawableText';
import { signerFieldProblems } from '../documents/form';
import { MAX_FIELDS_PER_SIGNER, MAX_SIGNERS, RequestFieldSchema, SignerFieldSchema } from '../documents/fields';
import { recipientTypes, requestStatuses, sealServices, signerStatuses, signingOrders, verificationMethods } from '../domain/signingRequests';

/** How far ahead a request may expire, whether given as expiresAt or as expiresInDays. */
export const MAX_EXPIRY_DAYS = 365;
const DAY_MS = 24 * 60 * 60 * 1000;

// Where an embedded page may be framed from (an origin), and where a signer goes after acting (a URL):
// https, or http on the loopback (localhost, 127.x.x.x) for development, which the service refuses with
// NODE_ENV=production. Stated as patterns, so that the OpenAPI document says what the schema enforces.
// No IPv6 literal: a Content-Security-Policy source cannot name one.
const DNS_NAME = '([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const PORT = '(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})';
const ORIGIN_SHAPE = `(https://(${DNS_NAME}|${OCTET}(\\.${OCTET}){3})|http://(localhost|127(\\.${OCTET}){3}))(:${PORT})?`;
const ORIGIN = new RegExp(`^${ORIGIN_SHAPE}$`);
const RETURN_URL = new RegExp(`^${ORIGIN_SHAPE}([/?#][!-~]*)?$`);

/** An origin as browsers write it: lower-case, without the scheme's default port. */
/** Who did something for an account (src/domain/actors.ts), as requests and events name them. */
export const ActorSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('member'), id: z.string(), email: z.string() }),
    z.object({
      type: z.literal('api_key'),
      id: z.string(),
      name: z.string(),
      memberId: z.string().nullable().openapi({ description: 'The member who made the key; null when none did (the CLI, or before members).' }),
      memberEmail: z.string().nullable(),
    }),
  ])
  .openapi('Actor', { description: 'A member in the console, or an API key and the member who made it; kept as it was when they acted.' });

const OriginSchema = z
  .string()
  .max(300)
  .regex(ORIGIN, {
    error:
      'must be an origin, https://host or https://host:port (http://localhost or http://127.x.x.x in development): no path, query, wildcard or trailing slash',
  })
  .refine((origin) => URL.canParse(origin), { error: 'must be an origin whose host name is valid (an xn-- label must be valid punycode)' })
  .transform((origin) => new URL(origin).origin)
  .openapi({ pattern: ORIGIN.source, example: 'https://app.example.com' });

/** Where a signer's browser is sent after acting: https (or http on the loopback in development), no credentials. */
export const ReturnUrlSchema = z
  .string()
  .max(2000)
  .regex(RETURN_URL, { error: 'must be an https:// URL (http://localhost or http://127.x.x.x in development) with a host name or an IPv4 address' })
  .refine((url) => URL.canParse(url), { error: 'must be a URL whose host name is valid (an xn-- label must be valid punycode)' })
  .openapi({ pattern: RETURN_URL.source, example: 'https://app.example.com/signing/done' });

/** The given origins and URLs that are plain http, refused with NODE_ENV=production: loopback development only. */
export const plainHttpProblems = (loopbackHttp: boolean, urls: [field: string, url: string | undefined][]) =>
  loopbackHttp
    ? []
    : urls.filter(([, url]) => url?.startsWith('http:')).map(([field]) => `${field} must be https:// (http:// to the loopback is for development only)`);

/** An access code: 4 to 12 visible ASCII characters (letters, digits, symbols; no spaces), easy to read out over the phone. */
export const ACCESS_CODE = /^[!-~]{4,12}$/;

const VerificationInputSchema = z
  .discriminatedUnion('method', [
    z.object({
      method: z.literal('access_code'),
      code: z
        .string()
        .regex(ACCESS_CODE, { error: 'must be 4 to 12 characters: letters, digits or symbols, no spaces' })
        .openapi({ description: 'Told to the signer out of band. Stored only as a hash; never returned.', writeOnly: true }),
    }),
    z.object({ method: z.literal('email_code') }),
  ])
  .openapi('SignerVerificationInput', {
    description:
      'What the signer proves before their page shows anything of the request: access_code, a code the sender tells them; ' +
      'email_code, a 6-digit code e-mailed to them when their page opens (valid 10 minutes). Not for a cc.',
  });

const SignerInputSchema = z.object({
  name: visibleText(200).superRefine(drawableInSealedPdf),
  // zod's e-mail pattern, stated as the pattern it is (the "email" format of other validators differs in details).
  email: z
    .string()
    .max(320)
    .regex(z.regexes.email, { error: 'must be a valid e-mail address' })
    .openapi({ description: 'An e-mail address. Each signer needs their own (compared without letter case).' }),
  fields: z.array(RequestFieldSchema).max(MAX_FIELDS_PER_SIGNER).optional().openapi({
    description:
      'Each on a page its document has and inside that page (400 otherwise); with several documents, each names its document_id. Not with template_id.',
  }),
  role: visibleText(100).optional().openapi({
    description:
      'With template_id: the template role this signer fills, one signer per role. With textTags: "fields": the role the documents’ text tags name for this signer ({{signature:client}}).',
  }),
  recipientType: z
    .enum(recipientTypes)
    .default('signer')
    .openapi({
      description:
        'signer: signs its fields, or on the signatures page when it has none; approver: approves or declines, places nothing; viewer: must open the documents; ' +
        'cc: gets the sealed documents when the request completes, never a link, blocks nothing. Only a signer has fields.',
    }),
  routingOrder: z
    .number()
    .int()
    .min(1)
    .max(MAX_SIGNERS)
    .optional()
    .openapi({
      description:
        'The step this recipient acts in: recipients with the same number act in parallel, and the next step starts when all of the step have acted. ' +
        'Given on one recipient, needed on every one but cc; without it, signingOrder decides (parallel: one step; sequential: one step each).',
    }),
  verification: VerificationInputSchema.optional(),
});

/** What a request does with its documents' text tags: make them its signers' fields, or only take them out. */
export const textTagUses = ['fields', 'remove'] as const;
export type TextTagUse = (typeof textTagUses)[number];

/** The most documents a request may have: REQUEST_MAX_DOCUMENTS may lower it, not raise it. */
export const MAX_DOCUMENTS = 20;

const RequestDocumentInputSchema = z
  .preprocess(
    (entry) =>
      entry && typeof entry === 'object' && !Array.isArray(entry) && (entry as Record<string, unknown>).document_id === undefined
        ? { ...entry, document_id: (entry as Record<string, unknown>).documentId }
        : entry,
    z.object({
      document_id: z.string().min(1, { error: 'is required' }).openapi({ description: 'A document of the account with its PDF (documentId is accepted too).' }),
    }),
  )
  .openapi('SigningRequestDocumentInput');

// A selection's options as a list: each at most an option's length, and no more than a field's options.
const prefillValue = z.union([text(500).superRefine(drawableInSealedPdf), z.boolean(), z.number(), z.array(text(200)).max(100)]);

// The public field is document_id (the API's first name for it); documentId is accepted too, as every other field is camelCase. Its
// sibling template_id is named the same way, and templateId accepted.
const withIdAliases = (body: unknown) => {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const fields = body as Record<string, unknown>;
  // An alias stands in only for a field that is absent: a document_id of null is refused, not replaced.
  const either = (name: string, alias: string) => (fields[name] === undefined ? fields[alias] : fields[name]);
  return { ...fields, document_id: either('document_id', 'documentId'), template_id: either('template_id', 'templateId') };
};

// A recipient who is cc, and one who is not a signer, as JSON Schema (for the document's rules below).
const isCc = { required: ['recipientType'], properties: { recipientType: { const: 'cc' } } };
const notSigner = { required: ['recipientType'], properties: { recipientType: { enum: recipientTypes.filter((type) => type !== 'signer') } } };

export const SigningRequestCreateSchema = z
  .preprocess(
    withIdAliases,
    z
      .object({
        document_id: z
          .string()
          .min(1, { error: 'is required' })
          .optional()
          .openapi({ description: 'The document to sign (documentId is accepted too); or documents, or template_id.' }),
        documents: z
          .array(RequestDocumentInputSchema)
          .min(1)
          .max(MAX_DOCUMENTS, { error: `must list at most ${MAX_DOCUMENTS} documents (REQUEST_MAX_DOCUMENTS)` })
          .optional()
          .openapi({
            ...jsonSchemaKeywords({ uniqueItems: true }),
            description:
              'Instead of document_id: the documents to sign, in the order signers see them, each once (at most REQUEST_MAX_DOCUMENTS, 20 by default, and REQUEST_MAX_PAGES pages in all).',
          }),
        template_id: z.string().min(1, { error: 'is required' }).optional().openapi({
          description:
            'Instead of document_id: a template (templateId is accepted too). Its PDF becomes a new document, counted against the monthly quota; each signer names a role.',
        }),
        prefill: z
          .record(visibleText(100), prefillValue)
          .optional()
          .openapi({
            ...jsonSchemaKeywords({ propertyNames: { maxLength: 100, pattern: VISIBLE_CHARACTER.source } }),
            description:
              'With template_id: values of the template’s text, date, e-mail and phone fields (text), numbers, radio and dropdown options, multi-select and checkbox group options (a list) and checkboxes (true or false), by field label, checked by each field’s rules; fixed for the signers.',
            example: { rent: '1200 EUR' },
          }),
        textTags: z
          .enum(textTagUses)
          .optional()
          .openapi({
            description:
              'Not with template_id. What to do with the text tags printed in the documents ({{signature:client}}, {{text:1:company}}; see POST /documents/{id}/detect-fields), which signers must never see: ' +
              'fields, take them out and make each one a field of the signer it names (by role, or by number: 1 is the first signer); remove, take them out and place nothing. ' +
              'Either way the request is made on a copy of each tagged document without its tags (a new document, counted against the monthly quota). ' +
              'Without textTags, a document that has tags is refused (400).',
          }),
        title: visibleText(200).superRefine(drawableInSealedPdf),
        message: text(5000).optional(),
        signers: z
          .array(SignerInputSchema)
          .min(1)
          .max(MAX_SIGNERS)
          .openapi({ description: 'Each with an e-mail address of their own (compared without letter case).' }),
        signingOrder: z.enum(signingOrders).default('parallel'),
        expiresAt: dateTime.optional().openapi({
          description: `ISO 8601, in the future and at most ${MAX_EXPIRY_DAYS} days ahead; not with expiresInDays. Default: expiresInDays from now.`,
        }),
        expiresInDays: z.number().int().min(1).max(MAX_EXPIRY_DAYS).optional().openapi({ description: 'Default 30; not with expiresAt.' }),
        reminderEveryDays: z.number().int().min(0).max(30).default(3).openapi({ description: '0 = no reminders.' }),
        redirectUrl: ReturnUrlSchema.optional().openapi({
          description:
            'Where signers go once they have acted, from their e-mail link as from an embedded page without a returnUrl: ' +
            'with ?event=signing_complete|declined|expired&signing_request_id=… added.',
        }),
      })
      .superRefine((input, ctx) => {
        const seen = new Set<string>();
        input.signers.forEach((signer, index) => {
          const email = signer.email.toLowerCase();
          if (seen.has(email))
            ctx.addIssue({ code: 'custom', path: ['signers', index, 'email'], message: 'is a duplicate: each signer needs their own e-mail address' });
          seen.add(email);
        });
        const expiry = expiryProblem(input.expiresAt);
        if (expiry) ctx.addIssue({ code: 'custom', path: ['expiresAt'], message: expiry });
        if (input.expiresAt && input.expiresInDays) ctx.addIssue({ code: 'custom', path: ['expiresInDays'], message: 'cannot be combined with expiresAt' });
        sourceIssues(input).forEach(([path, message]) => ctx.addIssue({ code: 'custom', path, message }));
      })
      // Each signer's fields as a form, reported with every other problem of the body once the fields themselves parse.
      // With textTags: "fields" their tags' fields join the form, which is checked with them once the tags are read
      // (fromTextTags.ts), so that a condition or formula may name a tag's label.
      .superRefine(
        (input, ctx) => {
          if (input.textTags === 'fields') return;
          // Other parts of the body may have failed: only fields that parsed are read.
          input.signers.forEach((signer: { fields?: unknown } | null, s) => {
            const fields = signer?.fields;
            if (!Array.isArray(fields)) return;
            for (const { position, key, problem } of signerFieldProblems(fields, (other) => `fields.${other}`)) {
              const at = position === undefined ? [] : key ? [position, key] : [position];
              ctx.addIssue({ code: 'custom', path: ['signers', s, 'fields', ...at], message: problem });
            }
          });
        },
        {
          when: ({ value, issues }) =>
            Array.isArray((value as { signers?: unknown })?.signers) && !issues.some(({ path }) => path?.[0] === 'signers' && path[2] === 'fields'),
        },
      )
      // Reported with every other problem of the body, even when those stop the checks above.
      .refine((input) => input.document_id !== undefined || input.documents !== undefined || input.template_id !== undefined, {
        path: ['document_id'],
        error: 'is required',
        when: ({ value }) => typeof value === 'object' && value !== null && !Array.isArray(value),
      }),
  )
  .openapi('SigningRequestCreate', {
    not: { required: ['expiresAt', 'expiresInDays'] },
    oneOf: [{ required: ['document_id'] }, { required: ['documents'] }, { required: ['template_id'] }],
    // The rules of sourceIssues, as JSON Schema.
    allOf: [
      // With a template each signer names a role and places no field, and textTags has no say; without one, no prefill, and roles only for text tags.
      jsonSchemaKeywords({
        if: { required: ['template_id'] },
        then: { properties: { textTags: false, signers: { items: { required: ['role'], not: { required: ['fields'] } } } } },
        else: {
          properties: { prefill: false },
          if: { not: { required: ['textTags'], properties: { textTags: { const: 'fields' } } } },
          then: { properties: { signers: { items: { properties: { role: false } } } } },
        },
      }),
      // Only a signer has fields, and someone other than cc acts.
      {
        properties: {
          signers: {
            items: {
              allOf: [
                jsonSchemaKeywords({ if: notSigner, then: { not: { required: ['fields'] } } }),
                jsonSchemaKeywords({ if: isCc, then: { not: { required: ['verification'] } } }),
              ],
            },
            ...jsonSchemaKeywords({ contains: { not: isCc } }),
          },
        },
      },
      // Once one recipient has a routing order, every one but cc has one, and signingOrder is not sequential.
      jsonSchemaKeywords({
        if: { required: ['signers'], properties: { signers: jsonSchemaKeywords({ contains: { required: ['routingOrder'] } }) } },
        then: {
          properties: {
            signingOrder: { not: { const: 'sequential' } },
            signers: { items: { anyOf: [{ required: ['routingOrder'] }, isCc] } },
          },
        },
      }),
      // With several documents, every field names its document.
      jsonSchemaKeywords({
        if: { required: ['documents'], properties: { documents: { minItems: 2 } } },
        then: { properties: { signers: { items: { properties: { fields: { items: { required: ['document_id'] } } } } } } },
      }),
    ],
  });

/** Why an expiresAt is refused: it must lie ahead, within the MAX_EXPIRY_DAYS that expiresInDays allows. */
function expiryProblem(expiresAt: string | undefined) {
  if (expiresAt === undefined) return undefined;
  const at = Date.parse(expiresAt);
  if (at <= Date.now()) return 'must be in the future';
  if (at > Date.now() + MAX_EXPIRY_DAYS * DAY_MS) return `must be at most ${MAX_EXPIRY_DAYS} days ahead`;
  return undefined;
}

/** The rules of a request's source: a document or a template, not both; roles and prefill with a template, fields without. */
function sourceIssues(input: {
  document_id?: string;
  documents?: { document_id: string }[];
  template_id?: string;
  prefill?: object;
  textTags?: TextTagUse;
  signingOrder: string;
  signers: { role?: string; recipientType: string; routingOrder?: number; fields?: { document_id?: string }[]; verification?: object }[];
}): [(string | number)[], string][] {
  const issues: [(string | number)[], string][] = [];
  if (input.document_id !== undefined && input.template_id !== undefined) issues.push([['template_id'], 'cannot be combined with document_id']);
  if (input.documents !== undefined && input.template_id !== undefined) issues.push([['template_id'], 'cannot be combined with documents']);
  if (input.documents !== undefined && input.document_id !== undefined) issues.push([['documents'], 'cannot be combined with document_id']);
  const documentIds = input.documents?.map((entry) => entry.document_id) ?? (input.document_id !== undefined ? [input.document_id] : []);
  documentIds.forEach((id, index) => {
    if (documentIds.indexOf(id) < index) issues.push([['documents', index, 'document_id'], 'is a duplicate: each document is sent once']);
  });
  input.signers.forEach((signer, s) => {
    if (signer.recipientType !== 'signer' && signer.fields !== undefined)
      issues.push([
        ['signers', s, 'fields'],
        `cannot be given to ${signer.recipientType === 'approver' ? 'an' : 'a'} ${signer.recipientType}: only a signer has fields`,
      ]);
  });
  input.signers.forEach((signer, s) => {
    if (signer.recipientType === 'cc' && signer.verification !== undefined)
      issues.push([['signers', s, 'verification'], 'cannot be given to a cc: a cc never opens a signing page']);
  });
  if (input.signers.length > 0 && input.signers.every((signer) => signer.recipientType === 'cc'))
    issues.push([['signers'], 'must have at least one recipient who is not cc']);
  const routed = input.signers.some((signer) => signer.routingOrder !== undefined);
  input.signers.forEach((signer, s) => {
    if (routed && signer.routingOrder === undefined && signer.recipientType !== 'cc')
      issues.push([['signers', s, 'routingOrder'], 'is required once another recipient has one']);
  });
  if (routed && input.signingOrder === 'sequential')
    issues.push([['signingOrder'], 'cannot be sequential with routingOrder: the routing orders are the steps']);
  input.signers.forEach((signer, s) =>
    signer.fields?.forEach((field, f) => {
      if (field.document_id === undefined && documentIds.length > 1)
        issues.push([['signers', s, 'fields', f, 'document_id'], 'is required when the request has several documents']);
    }),
  );
  const fromTemplate = input.template_id !== undefined;
  const tagRoles = input.textTags === 'fields';
  input.signers.forEach((signer, index) => {
    if (fromTemplate && signer.role === undefined) issues.push([['signers', index, 'role'], 'is required with template_id']);
    if (fromTemplate && signer.fields !== undefined) issues.push([['signers', index, 'fields'], 'cannot be given with template_id: the template places them']);
    if (!fromTemplate && !tagRoles && signer.role !== undefined) issues.push([['signers', index, 'role'], 'needs template_id, or textTags: "fields"']);
  });
  if (!fromTemplate && input.prefill !== undefined) issues.push([['prefill'], 'needs template_id']);
  if (fromTemplate && input.textTags !== undefined)
    issues.push([['textTags'], 'cannot be given with template_id: a template’s text tags are taken out when it is made (detectFields makes them fields)']);
  return issues;
}

/** The longest an embedded signing URL stays unopened: it opens once, within this many seconds. */
export const MAX_EMBED_SECONDS = 300;

export const EmbeddedSigningCreateSchema = z
  .object({
    allowedOrigins: z
      .array(OriginSchema)
      .min(1)
      .max(10)
      .transform((origins) => [...new Set(origins)])
      .openapi({
        description: 'The origins of the pages that may frame the signing page (its Content-Security-Policy frame-ancestors), and that receive its messages.',
      }),
    returnUrl: ReturnUrlSchema.optional().openapi({
      description:
        'Where the frame goes once the signer has acted or the session has expired, with ?event=signing_complete|declined|expired&signing_request_id=… added. ' +
        'Default: the request’s redirectUrl, if any; without either, the page shows the outcome.',
    }),
    expiresInSeconds: z
      .number()
      .int()
      .min(30)
      .max(MAX_EMBED_SECONDS)
      .default(MAX_EMBED_SECONDS)
      .openapi({ description: `How long the URL may wait to be opened (at most ${MAX_EMBED_SECONDS}, the default). It opens once.` }),
    locale: z
      .string()
      .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}$/, { error: 'must be a BCP 47 language tag such as en or fr-CH' })
      .optional()
      .openapi({ description: 'The signer’s locale (BCP 47), which the page formats dates and times in.', example: 'en-GB' }),
  })
  .openapi('EmbeddedSigningCreate');

export const EmbeddedSigningSchema = z
  .object({
    url: z.string().openapi({ description: 'The URL to put in an iframe of one of allowedOrigins. It works once.' }),
    expiresAt: z.string().openapi({ description: 'Until when the URL may be opened.' }),
  })
  .openapi('EmbeddedSigning');

export const CancelSchema = z.object({ reason: text(1000).optional() }).openapi('SigningRequestCancel');

export const SigningRequestListQuerySchema = z
  .object({
    ...paginationQuery('signingRequest'),
    status: z.enum(requestStatuses).optional(),
    documentId: text(100).optional(),
    signerEmail: text(320).optional(),
    createdAfter: queryDate.optional().openapi({ description: 'Created at or after.' }),
    createdBefore: queryDate.optional().openapi({ description: 'Created before; must be after createdAfter.' }),
  })
  .refine(...laterThan('createdAfter', 'createdBefore'));

export const SignerSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    order: z.number().int(),
    recipientType: z.enum(recipientTypes),
    routingOrder: z.number().int().openapi({ description: 'The step this recipient acts in.' }),
    status: z.enum(signerStatuses).openapi({
      description: 'A signer is done when signed, an approver when approved, a viewer when viewed; declined ends the request. A cc stays pending.',
    }),
    fields: z.array(SignerFieldSchema).nullable(),
    notifiedAt: z.string().nullable(),
    viewedAt: z.string().nullable(),
    signedAt: z.string().nullable(),
    approvedAt: z.string().nullable(),
    declinedAt: z.string().nullable(),
    declineReason: z.string().nullable(),
    verification: z
      .object({
        method: z.enum(verificationMethods),
        verifiedAt: z.string().nullable().openapi({ description: 'When the signer first gave the right code.' }),
        lockedUntil: z.string().nullable().openapi({
          description:
            'After every fifth wrong try: no try until then (15 minutes, 1 hour, 4 hours); after the twentieth, the request’s expiry, unless you remind the signer.',
        }),
      })
      .nullable()
      .openapi('SignerVerification', { description: 'How the signer proves who they are; null when the sender asked for nothing. Never the code.' }),
  })
  .openapi('Signer');

export const ProgressSchema = z
  .object({
    stage: z.enum(['awaiting_signers', 'sealing', 'finished']).openapi({
      description:
        'awaiting_signers: waiting for signatures; sealing: every signer has signed and the sealed PDF is being made; finished: the request has its outcome (status).',
    }),
    waitingFor: z
      .array(z.string())
      .openapi({ description: 'Ids of the signers whose turn it is (all who have not acted when parallel; the next one when sequential).' }),
    sealing: z
      .object({
        attempts: z.number().int().openapi({ description: 'Failed sealing attempts so far.' }),
        lastError: z.string().nullable(),
        nextAttemptAt: z.string().nullable().openapi({ format: 'date-time' }),
        waitingOn: z
          .object({
            service: z.enum(sealServices),
            url: z.string().nullable().openapi({ description: 'The address that failed last (without credentials).' }),
            since: z.string().openapi({ format: 'date-time', description: 'When the seal began to wait for it.' }),
          })
          .nullable()
          .optional()
          .openapi({
            description:
              'The service the seal waits for: a timestamp authority or revocation responder that did not answer, or whose answer was refused. The seal is never made at a lower level meanwhile.',
          }),
      })
      .nullable()
      .openapi({ description: 'While sealing: how it goes. A request that cannot be sealed shows its failures here instead of staying pending in silence.' }),
  })
  .openapi('SigningRequestProgress', {
    description: 'Where the request stands, read from its workflow while it runs, from the database once it has finished.',
  });

export const SigningRequestDocumentSchema = z
  .object({
    documentId: z.string(),
    fileName: z.string(),
    pageCount: z.number().int().nullable(),
    originalSha256: z.string().openapi({ description: 'SHA-256 of the document when the request was made.' }),
    sealedSha256: z.string().nullable().openapi({ description: 'SHA-256 of its sealed PDF, once the request is completed.' }),
  })
  .openapi('SigningRequestDocument');

export const SigningRequestSchema = z
  .object({
    id: z.string().openapi({ example: 'sr_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    documentId: z.string().openapi({ description: 'The first document (the only one of a request made with document_id).' }),
    documents: z.array(SigningRequestDocumentSchema).openapi({ description: 'Every document of the request, in the order signers see them.' }),
    title: z.string(),
    message: z.string().nullable(),
    status: z.enum(requestStatuses),
    signingOrder: z.enum(signingOrders),
    expiresAt: z.string(),
    reminderEveryDays: z.number().int(),
    originalSha256: z.string().openapi({ description: 'Of the first document.' }),
    sealedSha256: z.string().nullable().openapi({ description: 'Of the first document’s sealed PDF.' }),
    signers: z.array(SignerSchema),
    progress: ProgressSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
    completedAt: z.string().nullable(),
    redirectUrl: z.string().nullable().openapi({ description: 'Where signers go once they have acted; null: they stay on the page.' }),
    bulkSend: z
      .object({ id: z.string(), row: z.number().int() })
      .nullable()
      .openapi({ description: 'The bulk send that made it and its row there (0-based); null for a request made on its own.' }),
    sentBy: ActorSchema.nullable().openapi({ description: 'Who sent it; null for requests sent before accounts had members.' }),
  })
  .openapi('SigningRequest');

export const AuditStepSchema = z
  .object({
    action: z.string(),
    actor: z.string().nullable(),
    signerId: z.string().nullable(),
    signerEmail: z.string().nullable(),
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    data: z.any(),
    at: z.string(),
  })
  .openapi('AuditStep');

export type SigningRequestCreateInput = z.infer<typeof SigningRequestCreateSchema>;
export type VerificationInput = z.infer<typeof VerificationInputSchema>;
export type EmbeddedSigningCreateInput = z.infer<typeof EmbeddedSigningCreateSchema>;
export type SigningRequestListQuery = z.infer<typeof SigningRequestListQuerySchema>;
