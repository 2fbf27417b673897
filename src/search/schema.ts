import { listOf } from '../api/route';
import { queryDate, paginationQuery, z } from '../api/validation';
import { DocumentSchema, documentStatuses } from '../documents/schema';
import { SigningRequestSchema } from '../signingRequests/schema';
import { requestStatuses } from '../../workflows/definitions';
import { decodeCursor, searchSorts } from './cursor';
import { isEmptySearchText, parseSearchText } from './text';

export const searchTypes = ['document', 'signing_request'] as const;
export type SearchType = (typeof searchTypes)[number];

export const MAX_QUERY_LENGTH = 500;

export const SearchQuerySchema = z
  .object({
    q: z
      .string()
      .max(MAX_QUERY_LENGTH)
      .optional()
      .openapi({ description: 'Full text: "quoted phrases", words, and the last word as a prefix (as you type). Query syntax is plain text here.', example: 'services agr' }),
    type: z.enum(searchTypes).optional().openapi({ description: 'Default: both.' }),
    status: z.enum([...new Set([...documentStatuses, ...requestStatuses])] as [string, ...string[]]).optional().openapi({ description: 'A document status or a signing request status.' }),
    signerEmail: z.string().trim().min(1).max(320).optional().openapi({ description: 'Signing requests with this signer (any letter case); excludes documents.' }),
    createdAfter: queryDate.optional().openapi({ type: 'string', format: 'date-time' }),
    createdBefore: queryDate.optional().openapi({ type: 'string', format: 'date-time' }),
    sort: z.enum(searchSorts).optional().openapi({ description: 'Default: relevance with q, else -createdAt (newest first).' }),
    limit: paginationQuery.limit,
    cursor: z
      .string()
      .max(500)
      .optional()
      .transform((value, ctx) => {
        if (value === undefined) return undefined;
        const cursor = decodeCursor(value);
        if (!cursor) ctx.addIssue({ code: 'custom', message: 'is not a valid cursor' });
        return cursor ?? undefined;
      })
      .openapi({ type: 'string', description: 'nextCursor of the previous page.' }),
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
  highlight: z.record(z.string(), z.string()).openapi({ description: 'Field → snippet with matches in <mark>…</mark>.', example: { text: '… the <mark>indemnity</mark> clause …' } }),
};

export const SearchHitSchema = z
  .union([
    DocumentSchema.extend({ type: z.literal('document'), ...hitFields }),
    SigningRequestSchema.extend({ type: z.literal('signing_request'), ...hitFields }),
  ])
  .openapi('SearchHit');

export const SearchResultSchema = listOf(SearchHitSchema)
  .extend({ total: z.number().int().openapi({ description: 'Hits over all pages.' }) })
  .openapi('SearchResult');
