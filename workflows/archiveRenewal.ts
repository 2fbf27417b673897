import { ActivityFailure, ApplicationFailure, continueAsNew, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ArchiveActivities } from './activities';
import { sealServiceUnavailable } from '../src/domain/signingRequests';

// One run of the archive renewal, started by its Temporal Schedule (src/temporal/client.ts): every
// sealed PDF whose newest document timestamp is due gets fresh validation data and a new one
// (src/signingRequests/archive.ts). A renewal that fails is retried for a minute; then a file that
// cannot be renewed is skipped, and an authority or responder that does not answer ends the run (the
// files after it would wait for it too). What is left stays due for the next run: a file stays as it
// was, valid until its timestamp's certificate ends, and the margin leaves months of runs before that.
const archive = proxyActivities<ArchiveActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 4 },
});

const waitsForAService = (error: unknown) =>
  error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === sealServiceUnavailable;

const BATCH = 50;

export interface ArchiveRenewalResult {
  renewed: number;
  failed: number;
}

/** `failedKeys` (the files this run gave up on) and `startedAt` are carried across continue-as-new, so that it never tries a file twice. */
export async function archiveRenewalWorkflow(
  carried: ArchiveRenewalResult & { failedKeys?: string[]; startedAt?: string } = { renewed: 0, failed: 0 },
): Promise<ArchiveRenewalResult> {
  const result = { renewed: carried.renewed, failed: carried.failed };
  const failed = new Set(carried.failedKeys ?? []);
  const startedAt = carried.startedAt ?? new Date().toISOString();
  for (;;) {
    // What this run renewed is not due again in it (however small the margin); what it gave up on is skipped.
    const due = (await archive.findArchivesDue({ limit: BATCH + failed.size, since: startedAt })).filter(
      (one) => !failed.has(`${one.requestId}/${one.documentId}`),
    );
    if (due.length === 0) return result;
    for (const one of due.slice(0, BATCH)) {
      try {
        if (await archive.renewArchive(one)) result.renewed++;
      } catch (error) {
        failed.add(`${one.requestId}/${one.documentId}`);
        result.failed++;
        const reason = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
        log.warn('archive renewal failed; it stays due for the next run', { ...one, error: reason });
        if (waitsForAService(error)) return result;
      }
    }
    // A long run starts over with a fresh history, carrying its counts.
    if (workflowInfo().continueAsNewSuggested) return continueAsNew<typeof archiveRenewalWorkflow>({ ...result, failedKeys: [...failed], startedAt });
  }
}
