import { listOf } from '../api/route';
import { eventTypes } from '../domain/events';
import { laterThan, paginationQuery, queryDate, z } from '../api/validation';
import { requestStatuses, signerStatuses } from '../domain/signingRequests';

const counts = (statuses: readonly string[]) => z.object(Object.fromEntries(statuses.map((status) => [status, z.number().int()])));
const seconds = z.number().nullable().openapi({ description: 'Seconds; null when no request has completed.' });

export const StatsSchema = z
  .object({
    documents: z.object({ total: z.number().int(), thisMonth: z.number().int().openapi({ description: 'Created this calendar month (UTC), not deleted.' }) }),
    signingRequests: z.object({ total: z.number().int(), byStatus: counts(requestStatuses) }),
    completionRate: z.number().nullable().openapi({ description: 'completed ÷ finished (completed, declined, cancelled, expired); null before any finished.' }),
    timeToComplete: z
      .object({ medianSeconds: seconds, p90Seconds: seconds })
      .openapi({ description: 'From sending to the last signature, over completed requests.' }),
    signers: z.object({ total: z.number().int(), byStatus: counts(signerStatuses) }),
    usage: z.object({
      periodResetsAt: z.string(),
      documents: z.object({ used: z.number().int(), limit: z.number().int().nullable() }),
      templates: z.object({ used: z.number().int(), limit: z.number().int().nullable() }),
    }),
  })
  .openapi('DashboardStats');

export const ActivityQuerySchema = z.object({
  ...paginationQuery('event'),
  type: z.enum(eventTypes).optional(),
});

export const ActivityItemSchema = z
  .object({
    id: z.string().openapi({ example: 'evt_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    type: z.enum(eventTypes),
    timestamp: z.string().openapi({ format: 'date-time' }),
    summary: z.string().openapi({ example: 'Ada Lovelace <ada@example.com> signed “Services agreement”' }),
    documentId: z.string().nullable(),
    signingRequestId: z.string().nullable(),
    signerId: z.string().nullable(),
  })
  .openapi('ActivityItem');

export const ActivityPageSchema = listOf(ActivityItemSchema).openapi('ActivityPage');

export const BreakdownQuerySchema = z
  .object({
    from: queryDate.optional().openapi({ description: 'Requests created at or after.' }),
    to: queryDate.optional().openapi({ description: 'Requests created before; must be after from.' }),
  })
  .refine(...laterThan('from', 'to'));

export const BreakdownSchema = z
  .object({
    requestsByStatus: counts(requestStatuses),
    signersByStatus: counts(signerStatuses),
    topPendingSigners: z
      .array(z.object({ email: z.string(), pendingRequests: z.number().int() }))
      .openapi({ description: 'Up to 10 signers (e-mail in lower case) with the most pending requests awaiting them.' }),
    declineReasons: z
      .array(z.object({ reason: z.string().nullable(), count: z.number().int() }))
      .openapi({ description: 'Up to 10, most frequent first; null = declined without a reason.' }),
  })
  .openapi('SigningBreakdown');

export const TrendsQuerySchema = z.object({
  months: z.coerce.number().int().min(1).max(36).default(12).openapi({ description: 'Calendar months (UTC) ending with this one, 1–36.' }),
});

export const TrendsSchema = z
  .object({
    data: z.array(
      z.object({
        month: z.string().openapi({ example: '2026-11' }),
        documentsCreated: z.number().int(),
        requestsSent: z.number().int(),
        completed: z.number().int(),
        declined: z.number().int(),
        expired: z.number().int(),
        medianTimeToCompleteSeconds: seconds,
      }),
    ),
  })
  .openapi('DashboardTrends');
