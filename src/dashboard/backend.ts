import type { UsageReader } from '../accounts/routes';
import type { requestStatuses, signerStatuses } from '../domain/signingRequests';

export type RequestStatus = (typeof requestStatuses)[number];
export type SignerStatus = (typeof signerStatuses)[number];

export interface DashboardStats {
  documents: { total: number; thisMonth: number };
  signingRequests: { total: number; byStatus: Record<RequestStatus, number> };
  timeToComplete: { medianSeconds: number | null; p90Seconds: number | null };
  signers: { total: number; byStatus: Record<SignerStatus, number> };
}

export interface SigningBreakdown {
  requestsByStatus: Record<RequestStatus, number>;
  signersByStatus: Record<SignerStatus, number>;
  topPendingSigners: { email: string; pendingRequests: number }[];
  declineReasons: { reason: string | null; count: number }[];
}

export interface MonthTrend {
  month: string;
  documentsCreated: number;
  requestsSent: number;
  completed: number;
  declined: number;
  expired: number;
  medianTimeToCompleteSeconds: number | null;
}

/** Calendar months (UTC) from `start`, as YYYY-MM keys, with the instant each one starts. */
export interface MonthRange {
  months: string[];
  start: Date;
  end: Date;
}

export interface DateRange {
  from?: Date;
  to?: Date;
}

/** The dashboard's aggregations, answered by SQL or by Elasticsearch with the same numbers. */
export interface DashboardAggregations {
  stats(accountId: string, monthStart: Date): Promise<DashboardStats>;
  breakdown(accountId: string, range: DateRange): Promise<SigningBreakdown>;
  trends(accountId: string, range: MonthRange): Promise<MonthTrend[]>;
}

/** The aggregations, and an account's usage of its plan (always from PostgreSQL: usage.ts), which GET /account shows too. */
export interface DashboardBackend extends DashboardAggregations, UsageReader {}

export const TOP_SIGNERS = 10;
export const TOP_DECLINE_REASONS = 10;
export const FINISHED_STATUSES = ['completed', 'declined', 'expired'] as const;

export const monthKey = (date: Date) => date.toISOString().slice(0, 7);
