import { ApplicationFailure } from '@temporalio/common';
import type { Config } from '../src/config';
import type { Db } from '../src/db';
import { isRefusedForGood } from '../src/db/errors';
import { databaseRefusal } from '../src/domain/signingRequests';
import type { EventLog } from '../src/events/service';
import type { MailTransport } from '../src/mail';
import { completeRequest } from '../src/signingRequests/complete';
import { createNotifier, sendClosingMails, sendInvitations, sendReminders } from '../src/signingRequests/notifications';
import { padesSealer, type SealConfig } from '../src/signingRequests/sealing';
import { waitingOnSealServices } from './sealServices';
import {
  announceRequest,
  expireRequest,
  recordApproval,
  recordCancellation,
  recordDecline,
  recordSignature,
  recordView,
  recordViewStep,
} from '../src/signingRequests/transitions';
import type { SigningRequestActivities } from '../workflows/activities';

export interface SigningActivityDeps {
  db: Db;
  events: EventLog;
  config: Pick<Config, 'publicUrl' | 'MAIL_FROM' | 'SIGNING_TOKEN_SECRET' | 'RATE_LIMIT_MULTIPLIER'> & SealConfig;
  mail: MailTransport;
}

/**
 * A change the database refuses for good (its data, not its timing: see isRefusedForGood) fails at once,
 * not retried: retrying repeated the refusal for days while the workflow, which had decided the change,
 * and the database, which never recorded it, disagreed. The workflow takes the refusal back (see
 * `databaseRefusal` in workflows/signingRequest.ts).
 */
function failingForGood<Args extends unknown[], Result>(name: string, work: (...args: Args) => Promise<Result>) {
  return async (...args: Args): Promise<Result> => {
    try {
      return await work(...args);
    } catch (error) {
      if (!isRefusedForGood(error)) throw error;
      throw ApplicationFailure.nonRetryable(`The database refused ${name} for good (SQLSTATE ${error.code}): ${error.message}`, databaseRefusal, error.code);
    }
  };
}

// The signing request workflow's activities (src/signingRequests/): its transitions, each a transaction
// with its audit step and event, safe to repeat; the seal that completes it; and its e-mails.
export function createSigningActivities(deps: SigningActivityDeps): SigningRequestActivities {
  const notifier = createNotifier(deps);
  const completion = { ...deps, sealer: padesSealer(deps.config) };
  return {
    announceRequest: failingForGood('announceRequest', (requestId) => announceRequest(deps, requestId)),
    recordView: failingForGood('recordView', (requestId, view) => recordView(deps, requestId, view)),
    recordSignature: failingForGood('recordSignature', (requestId, sign) => recordSignature(deps, requestId, sign)),
    recordApproval: failingForGood('recordApproval', (requestId, approval) => recordApproval(deps, requestId, approval)),
    recordViewStep: failingForGood('recordViewStep', (requestId, view) => recordViewStep(deps, requestId, view)),
    recordDecline: failingForGood('recordDecline', (requestId, decline) => recordDecline(deps, requestId, decline)),
    recordCancellation: failingForGood('recordCancellation', (requestId, reason, actor) => recordCancellation(deps, requestId, reason, actor ?? null)),
    expireRequest: failingForGood('expireRequest', (requestId) => expireRequest(deps, requestId)),
    completeRequest: failingForGood('completeRequest', (requestId) => waitingOnSealServices(() => completeRequest(completion, requestId))),
    sendInvitations: failingForGood('sendInvitations', (requestId, signerIds) => sendInvitations(notifier, requestId, signerIds)),
    sendReminders: failingForGood('sendReminders', (requestId, signerIds, round) => sendReminders(notifier, requestId, signerIds, round)),
    sendClosingMails: failingForGood('sendClosingMails', (requestId) => sendClosingMails(notifier, requestId)),
  };
}
