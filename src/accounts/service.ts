import type { Db } from '../db';
import { notFound } from '../errors';
import { newId } from '../ids';
import { authChanged } from '../apiKeys/changes';
import { countLiveTemplates } from '../templates/store';
import { monthWindow, type Plan, plans } from './plans';

export interface Account {
  id: string;
  email: string;
  name: string | null;
  plan: Plan;
  createdAt: Date;
}

interface AccountRow {
  id: string;
  email: string;
  name: string | null;
  plan: Plan;
  created_at: Date;
  updated_at: Date;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  email: row.email,
  name: row.name,
  plan: row.plan,
  createdAt: row.created_at,
});

export async function createAccount(db: Db, input: { email: string; plan: Plan; name?: string }): Promise<Account> {
  const [row] = await db<AccountRow>('accounts')
    .insert({ id: newId('account'), email: input.email, plan: input.plan, name: input.name ?? null })
    .returning('*');
  return toAccount(row);
}

export async function getAccount(db: Db, id: string): Promise<Account> {
  const row = await db<AccountRow>('accounts').where({ id }).first();
  if (!row) throw notFound('Account');
  return toAccount(row);
}

export async function setAccountPlan(db: Db, id: string, plan: Plan): Promise<Account> {
  const [row] = await db<AccountRow>('accounts').where({ id }).update({ plan, updated_at: db.fn.now() }).returning('*');
  if (!row) throw notFound('Account');
  authChanged();
  return toAccount(row);
}

/** Documents created this calendar month (UTC), deleted ones included: deleting does not give quota back. */
export async function countDocumentsThisMonth(db: Db, accountId: string, now = new Date()): Promise<number> {
  const { start } = monthWindow(now);
  const [{ count }] = await db('documents').where('account_id', accountId).andWhere('created_at', '>=', start).count({ count: '*' });
  return Number(count);
}

export async function describeUsage(db: Db, account: Account, now = new Date()) {
  const limits = plans[account.plan];
  const { end } = monthWindow(now);
  return {
    periodResetsAt: end.toISOString(),
    documents: { used: await countDocumentsThisMonth(db, account.id, now), limit: limits.documentsPerMonth },
    templates: { used: await countLiveTemplates(db, account.id), limit: limits.templates },
  };
}
