import type { Db } from '../src/db';
import type { EventLog } from '../src/events/service';
import { findArchivesDue, renewSealedArchive } from '../src/signingRequests/archive';
import type { SealConfig } from '../src/signingRequests/sealing';
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
    findArchivesDue: ({ limit, since }) => findArchivesDue(deps.db, { limit, since: new Date(since) }),
    renewArchive: (due) => waitingOnSealServices(() => renewSealedArchive(deps, due)),
  };
}
