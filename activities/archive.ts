import type { Db } from '../src/db';
import type { EventLog } from '../src/events/service';
import { ApplicationFailure } from '@temporalio/common';
import { sealServiceUnavailable } from '../src/domain/signingRequests';
import { ArchiveTimestampTooWeak, findArchivesDue, renewSealedArchive } from '../src/signingRequests/archive';
import { archivePolicyOf, type SealConfig } from '../src/signingRequests/sealing';
import type { ArchiveActivities } from '../workflows/activities';
import { waitingOnSealServices } from './sealServices';

export interface ArchiveActivityDeps {
  db: Db;
  events: EventLog;
  config: SealConfig;
}

// The archive renewal's activities (src/signingRequests/archive.ts): each renewal is conditional on the
// file it renews, so a retry after a lost answer renews nothing twice.
export function createArchiveActivities(deps: ArchiveActivityDeps): ArchiveActivities {
  return {
    findArchivesDue: ({ limit, since }) => findArchivesDue(deps.db, archivePolicyOf(deps.config), { limit, since: new Date(since) }),
    renewArchive: (due) =>
      waitingOnSealServices(() => renewSealedArchive(deps, due)).catch((error: unknown) => {
        // Not retried, and it ends the run as an authority that is down does: every file would be refused alike.
        if (error instanceof ArchiveTimestampTooWeak)
          throw ApplicationFailure.nonRetryable(error.message, sealServiceUnavailable, { service: 'timestamp authority' });
        throw error;
      }),
  };
}
