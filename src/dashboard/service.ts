import { monthWindow } from '../domain/plans';
import type { Account } from '../accounts/service';
import { describeUsage } from './usage';
import type { Db } from '../db';
import { monthKey, type DashboardBackend, type DateRange, type MonthRange } from './backend';

export interface DashboardDeps {
  db: Db;
  dashboard: DashboardBackend;
}

/** The last `count` calendar months (UTC), this one included. */
export function lastMonths(count: number, now = new Date()): MonthRange {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - count + 1, 1));
  const months = Array.from({ length: count }, (_, i) => monthKey(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + i, 1))));
  return { months, start, end: monthWindow(now).end };
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

export async function getStats({ db, dashboard }: DashboardDeps, account: Account, now = new Date()) {
  const [stats, usage] = await Promise.all([dashboard.stats(account.id, monthWindow(now).start), describeUsage(db, account, now)]);
  const { completed, declined, cancelled, expired } = stats.signingRequests.byStatus;
  return { ...stats, completionRate: ratio(completed, completed + declined + cancelled + expired), usage };
}

export const getBreakdown = ({ dashboard }: DashboardDeps, accountId: string, range: DateRange) => dashboard.breakdown(accountId, range);

export async function getTrends({ dashboard }: DashboardDeps, accountId: string, months: number, now = new Date()) {
  return { data: await dashboard.trends(accountId, lastMonths(months, now)) };
}
