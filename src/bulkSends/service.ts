import { getAccount, type Account } from '../accounts/service';
import { currentActor } from '../events/actingAs';
import type { Db } from '../db';
import { violatesUnique } from '../db/errors';
import { unitOfWork } from '../db/unitOfWork';
import { countDocumentsThisMonth } from '../documents/store';
import { firstStepOf } from '../domain/signingRequests';
import { monthWindow, plans } from '../domain/plans';
import { AppError, notFound, quotaExceeded, validationError } from '../errors';
import type { EventLog } from '../events/service';
import { idFromSeed, newId } from '../ids';
import { openMailHour } from '../mail/allowance';
import { cancelSigningRequest } from '../signingRequests/cancel';
import { createSigningRequest } from '../signingRequests/create';
import type { SigningDeps } from '../signingRequests/deps';
import { findTemplate, type Template } from '../templates/store';
import { checkRow, type RowSource } from './rows';
import { MAX_LISTED_PROBLEMS, type BulkSendRow } from './schema';
import {
  cancelQueuedRows,
  countBulkSend,
  findBulkSend,
  findPendingRequestsOf,
  findQueuedRows,
  finishBulkSend,
  insertBulkSend,
  markRowFailed,
  markRowSent,
  type BulkSendRecord,
} from './store';

/** The invitations one row's request sends when it is made: its first step's recipients (cc never waits for one). */
function invitationsPerRow(template: Template): number {
  const recipients = template.roles.map((role) => ({ id: role.name, type: role.recipientType, routingOrder: role.routingOrder ?? role.order }));
  return firstStepOf(recipients.filter((recipient) => recipient.type !== 'cc')).length;
}

/** Why the rows do not fit what the plan leaves this month (documents) and this hour (e-mails), with the numbers. */
async function quotaProblem(db: Db, account: Account, template: Template, rows: number, multiplier: number): Promise<AppError | undefined> {
  const documents = rows * template.documents.length;
  const limit = plans[account.plan].documentsPerMonth;
  if (limit !== null) {
    const used = await countDocumentsThisMonth(db, account.id);
    if (documents > limit - used) {
      const resetsAt = monthWindow().end.toISOString();
      return quotaExceeded(
        `These ${rows} rows would make ${documents} documents; the ${account.plan} plan allows ${limit} a month and ${Math.max(0, limit - used)} are left until ${resetsAt}.`,
        { limit, used, needed: documents, resetsAt },
      );
    }
  }
  const invitations = rows * invitationsPerRow(template);
  const hour = await openMailHour(db, account, multiplier, { lock: false });
  if (invitations > hour.remaining) {
    return quotaExceeded(
      `These ${rows} rows would send ${invitations} invitations; the ${account.plan} plan sends ${hour.limit} e-mails an hour and ${hour.remaining} are left.`,
      { limit: hour.limit, remaining: hour.remaining, needed: invitations },
    );
  }
  return undefined;
}

/** Every row checked; a 400 listing the first MAX_LISTED_PROBLEMS problems, and how many there are. */
function checkedRows(template: Template, rows: unknown[], source: RowSource, before: string[] = []): BulkSendRow[] {
  const problems = [...before];
  const checked: BulkSendRow[] = [];
  rows.forEach((given, index) => {
    const row = checkRow(template, given, index, source);
    if (row.problems) problems.push(...row.problems);
    else checked.push(row.row);
  });
  if (problems.length === 0) return checked;
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
  if (problems.length > listed.length) listed.push(`… and ${problems.length - listed.length} more problems (${problems.length} in all)`);
  throw validationError(listed);
}

export interface BulkSendDeps {
  db: Db;
  events: EventLog;
  rateLimitMultiplier: number;
  /** Starts the job's workflow (src/bulkSends/workflow.ts). */
  start(job: BulkSendRecord): Promise<void>;
}

/**
 * A bulk send: every row checked as the request it becomes, and the rows against what the plan leaves, before
 * anything is sent. A dry run answers the check. Otherwise the job and its rows are recorded with its event in one
 * transaction, and its workflow sends the rows.
 */
export async function createBulkSend(
  deps: BulkSendDeps,
  account: Account,
  input: { templateId: string; rows: unknown[]; dryRun: boolean; source: RowSource; problems?: string[] },
  { id = newId('bulkSend') }: { id?: string } = {},
) {
  const made = await findBulkSend(deps.db, account.id, id);
  if (made) {
    // A retry after an api that died before starting the job's workflow starts it (else the sweeper does).
    if (!made.workflowStartedAt) await deps.start(made);
    return { job: made };
  }
  const template = await findTemplate(deps.db, account.id, input.templateId);
  if (!template) throw notFound('Template');
  const rows = checkedRows(template, input.rows, input.source, input.problems);
  const overQuota = await quotaProblem(deps.db, account, template, rows.length, deps.rateLimitMultiplier);
  if (overQuota) throw overQuota;
  if (input.dryRun) {
    return {
      check: {
        dryRun: true as const,
        templateId: template.id,
        rowCount: rows.length,
        requests: rows.length,
        invitations: rows.length * invitationsPerRow(template),
      },
    };
  }
  let job: BulkSendRecord;
  try {
    job = await recordBulkSend(deps, account, template, id, rows);
  } catch (error) {
    // The same job made at the same moment (two clicks, a retry beside a stalled first try): its insert waited and lost.
    if (!violatesUnique(error, 'bulk_sends_pkey')) throw error;
    return createBulkSend(deps, account, input, { id });
  }
  await deps.start(job);
  return { job };
}

/** The job and its rows, with its bulk_send.created event, in one transaction. */
function recordBulkSend(deps: BulkSendDeps, account: Account, template: Template, id: string, rows: BulkSendRow[]) {
  return unitOfWork(deps.db, async (trx) => {
    await insertBulkSend(trx, { id, accountId: account.id, templateId: template.id, createdAt: new Date(), rows, sentBy: currentActor() ?? null });
    await deps.events.record(
      trx,
      account.id,
      'bulk_send.created',
      { bulkSendId: id, templateId: template.id, templateName: template.name, rowCount: rows.length },
      `${id}:created`,
    );
    return (await findBulkSend(trx, account.id, id))!;
  });
}

/** A job as the API shows it. */
export async function presentBulkSend(db: Db, job: BulkSendRecord) {
  const counts = await countBulkSend(db, job.id);
  return {
    id: job.id,
    templateId: job.templateId,
    status: job.status,
    rowCount: job.rowCount,
    ...counts,
    createdAt: job.createdAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
  };
}

export async function getBulkSend(db: Db, accountId: string, id: string) {
  const job = await findBulkSend(db, accountId, id);
  if (!job) throw notFound('Bulk send');
  return job;
}

/** Stops the rows not yet sent; the workflow then finishes the job (and cancels the sent requests, when asked). */
export async function cancelBulkSend(db: Db, accountId: string, id: string, cancelSent: boolean) {
  await getBulkSend(db, accountId, id);
  await unitOfWork(db, (trx) => cancelQueuedRows(trx, id, cancelSent));
  return getBulkSend(db, accountId, id);
}

/** What the next batch came to: rows still queued after it, and when it must wait (the e-mails of this hour are spent). */
export interface BulkBatch {
  sent: number;
  failed: number;
  remaining: number;
  waitUntil?: string;
}

/** Row n's request id: always the same for the same job and row, so that a retried batch makes no request twice. */
export const rowRequestId = (job: BulkSendRecord, row: number) => idFromSeed('signingRequest', job.createdAt, `${job.id}\n${row}`);

/** Rows one batch makes at once: as many as POST /signatures needs in flight to keep this machine busy. */
export const ROWS_IN_FLIGHT = 8;

/**
 * Sends up to `limit` queued rows, ROWS_IN_FLIGHT at a time, each as one request from the template (its id derived from
 * the job and row, so that a retry finds it made). A row the service refuses for good records why; one that waits for
 * the hour's e-mails stops the batch with the time they fit. A failure of the service fails the batch once every row in
 * flight has ended, so that its retry does not race them.
 */
export async function sendQueuedRows(deps: SigningDeps, id: string, limit: number): Promise<BulkBatch> {
  const job = await findBulkSend(deps.db, undefined, id);
  if (!job) return { sent: 0, failed: 0, remaining: 0 };
  const account = await getAccount(deps.db, job.accountId).catch(() => undefined);
  const batch: BulkBatch = { sent: 0, failed: 0, remaining: 0 };
  const template = await findTemplate(deps.db, job.accountId, job.templateId);
  const queued = await findQueuedRows(deps.db, id, limit);
  let stopped = false;
  const sendRow = async ({ row, input }: (typeof queued)[number]) => {
    try {
      if (!account || !template) throw notFound('Template');
      const request = checkRow(template, input, row, 'json');
      if (request.problems) throw validationError(request.problems);
      const made = await createSigningRequest(deps, account, request.request, { requestId: rowRequestId(job, row), bulk: { id, row, sentBy: job.sentBy } });
      await markRowSent(deps.db, id, row, made.request.id);
      batch.sent++;
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) {
        stopped = true;
        throw error;
      }
      if (error.status === 429) {
        stopped = true;
        const retryAfter = Number(error.headers?.['Retry-After']) || 60;
        batch.waitUntil = new Date(Date.now() + retryAfter * 1000).toISOString();
        return;
      }
      await markRowFailed(deps.db, id, row, [error.message, ...(error.details ?? [])].join(' '));
      batch.failed++;
    }
  };
  let next = 0;
  const lanes = Array.from({ length: Math.min(ROWS_IN_FLIGHT, queued.length) }, async () => {
    while (next < queued.length && !stopped) await sendRow(queued[next++]);
  });
  const failure = (await Promise.allSettled(lanes)).find((lane) => lane.status === 'rejected');
  if (failure) throw failure.reason;
  batch.remaining = (await findQueuedRows(deps.db, id, 1)).length;
  return batch;
}

/**
 * The end of a job: once no row is queued it is finished, with its bulk_send.completed event, in one transaction;
 * a cancel that asked for them cancels the sent requests still pending, `limit` at a time. Answers how many are left to cancel.
 */
export async function finishJob(deps: SigningDeps, id: string, limit: number): Promise<number> {
  const job = await findBulkSend(deps.db, undefined, id);
  if (!job) return 0;
  if (job.cancelSent) {
    for (const request of await findPendingRequestsOf(deps.db, id, limit)) {
      await cancelSigningRequest(deps, job.accountId, request.id, 'The bulk send was cancelled.').catch((error: unknown) => {
        if (!(error instanceof AppError && error.status < 500)) throw error; // ended meanwhile
      });
    }
    const left = (await findPendingRequestsOf(deps.db, id, 1)).length;
    if (left) return left;
  }
  await unitOfWork(deps.db, async (trx) => {
    if (!(await finishBulkSend(trx, id))) return;
    const counts = await countBulkSend(trx, id);
    await deps.events.record(trx, job.accountId, 'bulk_send.completed', { bulkSendId: id, templateId: job.templateId, ...counts.rows }, `${id}:completed`);
  });
  return 0;
}
