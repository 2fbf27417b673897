import { listOf } from '../api/route';
import { pageLimit, queryDate, text, visibleText, z } from '../api/validation';
import { DocumentSchema, documentStatuses } from '../documents/schema';
import { SigningRequestSchema } from '../signingRequests/schema';
import { TemplateSchema } from '../templates/schema';
import { requestStatuses } from '../domain/signingRequests';
import { decodeCursor, searchSorts } from './cursor';
import { isEmptySearchText, parseSearchText } from './text';

export const searchTypes = ['document', 'signing_request', 'template'] as const;
export type SearchType = (typeof searchTypes)[number];

export const MAX_QUERY_LENGTH = 500;

/**
 * Hits are counted up to this many: past it, `total` says "at least this many". An exact count of a word
 * found in most of 100,000 documents costs as much as ranking them, on every page.
 */
export const TOTAL_COUNTED_UP_TO = 1000;

export const SearchQuerySchema = z
  .object({
    q: text(MAX_QUERY_LENGTH).optional().openapi({
      description:
        'Full text: "quoted phrases", words, and the last word as a prefix (as you type). Query syntax is plain text here. Must contain a letter or a digit.',
      example: 'services agr',
    }),
    type: z.enum(searchTypes).optional().openapi({ description: 'Default: every type. Templates are found by name; status and signerEmail leave them out.' }),
    status: z
      .enum([...new Set([...documentStatuses, ...requestStatuses])] as [string, ...string[]])
      .optional()
      .openapi({ description: 'A document status or a signing request status.' }),
    signerEmail: visibleText(320).optional().openapi({ description: 'Signing requests with this signer (any letter case); excludes documents.' }),
    createdAfter: queryDate.optional().openapi({ description: 'Created at or after.' }),
    createdBefore: queryDate.optional().openapi({ description: 'Created before; must be after createdAfter.' }),
    sort: z.enum(searchSorts).optional().openapi({ description: 'Default: relevance with q, else -createdAt (newest first). relevance needs q.' }),
    limit: pageLimit,
    cursor: text(500)
      .optional()
      .transform((value, ctx) => {
        if (value === undefined) return undefined;
        const cursor = decodeCursor(value);
        if (!cursor) ctx.addIssue({ code: 'custom', message: 'is not a valid cursor' });
        return cursor ?? undefined;
      })
      .openapi({ type: 'string', description: 'nextCursor of the previous page, with the same sort; anything else is 400.' }),
  })
  .transform((query, ctx) => {
    const text = query.q === undefined ? null : parseSearchText(query.q);
    if (text && isEmptySearchText(text)) ctx.addIssue({ code: 'custom', path: ['q'], message: 'must contain a letter or a digit' });
    const sort = query.sort ?? (text ? 'relevance' : '-createdAt');
    if (sort === 'relevance' && !text) ctx.addIssue({ code: 'custom', path: ['sort'], message: 'relevance needs q' });
    if (query.cursor && query.cursor.sort !== sort) ctx.addIssue({ code: 'custom', path: ['cursor'], message: 'belongs to another sort order' });
    if (query.createdAfter && query.createdBefore && query.createdAfter >= query.createdBefore) {
      ctx.addIssue({ code: 'custom', path: ['createdBefore'], message: 'must be after createdAfter' });
    }
    return { ...query, text, sort };
  });

export type SearchQuery = z.output<typeof SearchQuerySchema>;

const hitFields = {
  score: z.number().nullable().openapi({ description: 'Relevance (engine-specific scale); null when not sorted by relevance.' }),
  highlight: z
    .record(z.string(), z.string())
    .openapi({ description: 'Field → snippet with matches in <mark>…</mark>.', example: { text: '… the <mark>indemnity</mark> clause …' } }),
};

export const SearchHitSchema = z
  .union([
    DocumentSchema.extend({ type: z.literal('document'), ...hitFields }),
    SigningRequestSchema.extend({ type: z.literal('signing_request'), ...hitFields }),
    TemplateSchema.extend({ type: z.literal('template'), ...hitFields }),
  ])
  .openapi('SearchHit');

export const SearchResultSchema = listOf(SearchHitSchema)
  .extend({
    total: z
      .number()
      .int()
      .openapi({
        description: `Hits over all pages, counted up to ${TOTAL_COUNTED_UP_TO}: when there are more, ${TOTAL_COUNTED_UP_TO} and totalIsExact false.`,
      }),
    totalIsExact: z.boolean().openapi({ description: `False when there are more than ${TOTAL_COUNTED_UP_TO} hits (total is then a lower bound).` }),
  })
  .openapi('SearchResult');
