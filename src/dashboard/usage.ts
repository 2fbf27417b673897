import type { Account } from '../accounts/service';
import { countDocumentsThisMonth } from '../documents/store';
import type { Db } from '../db';
import { monthWindow, plans } from '../domain/plans';
import { countLiveTemplates } from '../templates/store';

// A read model: what an account used of its plan this month, for GET /account, the dashboard and the console.

export async function describeUsage(db: Db, account: Account, now = new Date()) {
  const limits = plans[account.plan];
  const { end } = monthWindow(now);
  return {
    periodResetsAt: end.toISOString(),
    documents: { used: await countDocumentsThisMonth(db, account.id, now), limit: limits.documentsPerMonth },
    templates: { used: await countLiveTemplates(db, account.id), limit: limits.templates },
  };
}
