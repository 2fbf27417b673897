import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { SigningActivities } from '../activities/signingRequest';
import {
  cancelUpdate,
  declineUpdate,
  remindUpdate,
  searchAttributes,
  signUpdate,
  stateQuery,
  viewedSignal,
  type RequestStatus,
  type SignerStatus,
  type SigningRequestInput,
  type SigningRequestState,
} from './definitions';

// E-mails, records and sealing: retried with backoff for days; every activity is idempotent and
// heartbeats, so one lost with its worker is retried within the heartbeat timeout.
const activities = proxyActivities<SigningActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 500 },
});

/**
 * One signing request, from invitations to the sealed PDF. The workflow holds the decisions (whose
 * turn it is, when to remind, when it expires); activities record them and touch the world.
 */
export async function signingRequestWorkflow(input: SigningRequestInput): Promise<SigningRequestState> {
  const { requestId } = input;
  const signers = input.signerIds.map((id) => ({ id, status: 'pending' as SignerStatus, acting: false }));
  let status: RequestStatus = 'pending';
  let changed = false;
  const expiresAt = new Date(input.expiresAt).getTime();
  let reminderRound = 0;
  let nextReminderAt = input.reminderEveryMs > 0 ? Date.now() + input.reminderEveryMs : Infinity;

  const state = (): SigningRequestState => ({ status, signers: signers.map(({ id, status }) => ({ id, status })) });
  const acted = (signer: (typeof signers)[number]) => signer.status === 'signed' || signer.status === 'declined';
  // Whose turn it is: everyone who has not acted when parallel; the first of them when sequential.
  const due = () => {
    const open = signers.filter((signer) => !acted(signer));
    return input.signingOrder === 'sequential' ? open.slice(0, 1) : open;
  };
  const setStatus = (next: RequestStatus) => {
    status = next;
    upsertSearchAttributes([{ key: searchAttributes.status, value: next }]);
  };
  const refuseUnlessPending = () => {
    if (status !== 'pending') throw ApplicationFailure.nonRetryable(`This signing request is ${status}.`, 'RequestEnded');
  };
  const refuseUnlessDue = (signerId: string) => {
    refuseUnlessPending();
    const signer = signers.find((candidate) => candidate.id === signerId);
    if (!signer) throw ApplicationFailure.nonRetryable('No such signer in this request.', 'UnknownSigner');
    if (acted(signer) || signer.acting) throw ApplicationFailure.nonRetryable(`This signer has already ${signer.status === 'declined' ? 'declined' : 'signed'}.`, 'AlreadyActed');
    if (!due().includes(signer)) throw ApplicationFailure.nonRetryable('It is not this signer’s turn yet.', 'NotYourTurn');
    return signer;
  };
  // Marks the signer busy before the first await, so a second call for the same signer is refused.
  const act = async (signerId: string, work: () => Promise<unknown>, outcome: SignerStatus) => {
    const signer = refuseUnlessDue(signerId);
    signer.acting = true;
    try {
      await work();
      signer.status = outcome;
    } finally {
      signer.acting = false;
      changed = true;
    }
    return state();
  };

  setHandler(stateQuery, state);
  setHandler(
    signUpdate,
    (sign) => act(sign.signerId, () => activities.recordSignature(requestId, sign), 'signed'),
    { validator: (sign) => void refuseUnlessDue(sign.signerId) },
  );
  setHandler(
    declineUpdate,
    async (decline) => {
      const result = await act(decline.signerId, () => activities.recordDecline(requestId, decline), 'declined');
      setStatus('declined');
      return { ...result, status };
    },
    { validator: (decline) => void refuseUnlessDue(decline.signerId) },
  );
  setHandler(
    cancelUpdate,
    async ({ reason }) => {
      setStatus('cancelled');
      changed = true;
      await activities.recordCancellation(requestId, reason ?? null);
      return state();
    },
    { validator: (_cancel) => refuseUnlessPending() },
  );
  setHandler(
    remindUpdate,
    async () => ({ remindedSignerIds: await activities.sendReminders(requestId, due().map((signer) => signer.id), ++reminderRound) }),
    { validator: () => refuseUnlessPending() },
  );
  setHandler(viewedSignal, async (view) => {
    const signer = signers.find((candidate) => candidate.id === view.signerId);
    if (!signer || status !== 'pending' || signer.status !== 'notified') return;
    signer.status = 'viewed';
    await activities.recordView(requestId, view);
  });

  let announced = false;
  while (status === 'pending') {
    const toInvite = due().filter((signer) => signer.status === 'pending');
    if (toInvite.length > 0) {
      await activities.sendInvitations(requestId, toInvite.map((signer) => signer.id));
      for (const signer of toInvite) if (signer.status === 'pending') signer.status = 'notified';
    }
    if (!announced) {
      await activities.announceRequest(requestId);
      announced = true;
    }
    if (signers.every((signer) => signer.status === 'signed')) {
      await activities.completeRequest(requestId);
      setStatus('completed');
      break;
    }
    const wakeAt = Math.min(expiresAt, nextReminderAt);
    const woken = await condition(() => changed || status !== 'pending', Math.max(1, wakeAt - Date.now()));
    changed = false;
    if (woken || status !== 'pending') continue;
    if (Date.now() >= expiresAt) {
      setStatus('expired');
      await activities.expireRequest(requestId);
    } else {
      await activities.sendReminders(requestId, due().map((signer) => signer.id), ++reminderRound);
      nextReminderAt = Date.now() + input.reminderEveryMs; // no burst of catch-up reminders after downtime
    }
  }
  await condition(allHandlersFinished);
  await activities.sendClosingMails(requestId);
  return state();
}
