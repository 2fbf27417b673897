import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db';
import type { EventLog } from '../events/service';
import type { TextTagFinder } from '../pdf/textTags';
import { requestLimitsFrom, type RequestLimits } from '../documents/fields';
import { loadTokenSecret, verificationKey } from './tokens';

/** What the request services need, from the process's settings. */
export const signingDepsFrom = ({
  db,
  events,
  temporal,
  textTags,
  config,
}: {
  db: Db;
  events: EventLog;
  temporal: Client;
  textTags: TextTagFinder;
  config: Config;
}): SigningDeps => ({
  db,
  events,
  temporal,
  textTags,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  publicUrl: config.publicUrl,
  rateLimitMultiplier: config.RATE_LIMIT_MULTIPLIER,
  requestLimits: requestLimitsFrom(config),
  verificationKey: verificationKey(loadTokenSecret(config.SIGNING_TOKEN_SECRET, config.dataDir)),
  loopbackHttp: config.NODE_ENV !== 'production',
});

export interface SigningDeps {
  db: Db;
  events: EventLog;
  temporal: Client;
  /** Finds and takes out the text tags of the documents a request is made on (src/pdf/textTags.ts). */
  textTags: TextTagFinder;
  taskQueue: string;
  publicUrl: string;
  /** RATE_LIMIT_MULTIPLIER, which raises the plans' e-mails an hour too. */
  rateLimitMultiplier: number;
  requestLimits: RequestLimits;
  /** What signers' access codes are hashed with (tokens.ts). */
  verificationKey: Buffer;
  /** Whether return URLs and embedding origins may be plain http to the loopback (not with NODE_ENV=production). */
  loopbackHttp: boolean;
}
