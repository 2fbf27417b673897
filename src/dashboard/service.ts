import { monthWindow } from '../domain/plans';
import { describeUsage, type Account } from '../accounts/service';
import type { Db } from '../db';
import type { SearchBackend } from '../search/backend';
import { monthKey, type DateRange, type MonthRange } from './backend';

export interface DashboardDeps {
  db: Db;
  search: SearchBackend;
}

/** The last `count` calendar months (UTC), this one included. */
export function lastMonths(count: number, now = new Date()): MonthRange {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - count + 1, 1));
  const months = Array.from({ length: count }, (_, i) => monthKey(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + i, 1))));
  return { months, start, end: monthWindow(now).end };
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

export async function getStats({ db, search }: DashboardDeps, account: Account, now = new Date()) {
  const [stats, usage] = await Promise.all([search.dashboard.stats(account.id, monthWindow(now).start), describeUsage(db, account, now)]);
  const { completed, declined, cancelled, expired } = stats.signingRequests.byStatus;
  return { ...stats, completionRate: ratio(completed, completed + declined + cancelled + expired), usage };
}

export const getBreakdown = ({ search }: DashboardDeps, accountId: string, range: DateRange) => search.dashboard.breakdown(accountId, range);

export async function getTrends({ search }: DashboardDeps, accountId: string, months: number, now = new Date()) {
  return { data: await search.dashboard.trends(accountId, lastMonths(months, now)) };
}
