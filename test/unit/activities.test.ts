import { expect } from 'chai';
import { createActivities, type ActivityDeps } from '../../activities';

// Workflow histories name each activity they scheduled (test/workflows/histories replay against these
// names): one renamed or dropped strands every request that ran it.
describe('the activities the worker registers', () => {
  it('are exactly these, by name', () => {
    const deps = { config: { SIGNING_TOKEN_SECRET: 'test', MAIL_FROM: 'Signet <signet@example.com>', dataDir: '/nonexistent' } } as unknown as ActivityDeps;
    expect(Object.keys(createActivities(deps)).sort()).to.deep.equal([
      'adoptLegacyDeliveries',
      'announceRequest',
      'completeRequest',
      'deleteExpiredIdempotencyKeys',
      'disableWebhook',
      'dispatchStaleEvents',
      'expireRequest',
      'findArchivesDue',
      'finishBulkSend',
      'indexEvent',
      'indexEventsFor',
      'recordApproval',
      'recordCancellation',
      'recordDecline',
      'recordSignature',
      'recordView',
      'recordViewStep',
      'renewArchive',
      'sendBulkRows',
      'sendClosingMails',
      'sendDueDeliveries',
      'sendInvitations',
      'sendReminders',
      'startOrphanedBulkSends',
      'startOrphanedSigningRequests',
      'tellSendersOfLocks',
      'wakeStalledWebhooks',
    ]);
  });
});
