import { continueAsNew, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { BulkSendActivities } from './activities';

// One workflow per bulk send (src/bulkSends): its rows sent in batches, each row one request whose id is derived
// from the job and the row, so that a batch retried after a crash makes nothing twice. A pause between batches
// leaves the workers to other accounts' requests; a long job starts over with a fresh history.
const bulk = proxyActivities<BulkSendActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Rows a batch sends; the pause after each. */
export const BULK_BATCH = 25;
const PAUSE_MS = 200;

export interface BulkSendResult {
  sent: number;
  failed: number;
}

export async function bulkSendWorkflow(input: { bulkSendId: string } & Partial<BulkSendResult>): Promise<BulkSendResult> {
  const result = { sent: input.sent ?? 0, failed: input.failed ?? 0 };
  for (;;) {
    const batch = await bulk.sendBulkRows({ bulkSendId: input.bulkSendId, limit: BULK_BATCH });
    result.sent += batch.sent;
    result.failed += batch.failed;
    if (batch.remaining === 0) break;
    // The account's e-mails of this hour are spent: on when they fit again.
    const wait = batch.waitUntil ? Math.max(PAUSE_MS, Date.parse(batch.waitUntil) - Date.now()) : PAUSE_MS;
    await sleep(wait);
    if (workflowInfo().continueAsNewSuggested) return continueAsNew<typeof bulkSendWorkflow>({ bulkSendId: input.bulkSendId, ...result });
  }
  while ((await bulk.finishBulkSend({ bulkSendId: input.bulkSendId, limit: BULK_BATCH })) > 0) await sleep(PAUSE_MS);
  return result;
}
