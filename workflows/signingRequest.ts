import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  TimeoutFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { SigningActivities } from '../activities/signingRequest';
import {
  approveUpdate,
  cancelUpdate,
  declineUpdate,
  progressQuery,
  remindUpdate,
  searchAttributes,
  type SigningRequestOutcome,
  type SigningRequestResult,
  signUpdate,
  stateQuery,
  viewDoneUpdate,
  viewedSignal,
} from './definitions';
import {
  changeRefused,
  databaseRefusal,
  firstStepOf,
  hasDonePart,
  type RecipientType,
  type RequestStatus,
  routedRecipients,
  type SignerStatus,
  type SigningRequestInput,
  type SigningRequestProgress,
  type SigningRequestState,
} from '../src/domain/signingRequests';

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 500 };

// E-mails: retried with backoff for days; every activity is idempotent and heartbeats, so one lost
// with its worker is retried within the heartbeat timeout.
const emailOptions = { startToCloseTimeout: '2 minutes', heartbeatTimeout: '15 seconds', retry } as const;
const activities = proxyActivities<SigningActivities>(emailOptions);

// Transitions (one short database transaction each) are regular activities, scheduled once the update
// that asks for them is accepted into the history: a local activity in an update handler commits before
// the workflow task that accepts the update, so a worker killed in between left the change in the
// database and the update nowhere (found by bench/chaos.ts), and several local activities in one task
// could resume in another order on replay. They are idempotent: a retry changes nothing.
const transitions = proxyActivities<SigningActivities>({ startToCloseTimeout: '1 minute', heartbeatTimeout: '15 seconds', retry });

// Sealing retries are the workflow's own, so that `progress` can say how many failed, why, and when
// the next one runs: a request that cannot be sealed is visible, never a silent retry loop. Sealing is
// a regular activity, scheduled with the answer to the last signature's update: a worker hands a
// workflow task back only once its local activities are done, so a local one held that signer's 200
// behind the seal. The worker that completes the task is handed the activity in the same reply (eager
// execution), so the seal starts at once without a trip through matching.
const sealing = proxyActivities<SigningActivities>({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '15 seconds', retry: { maximumAttempts: 1 } });
// Requests whose history already sealed (or tried to) with a local activity replay it as one; remove
// with the patch once no request begun before 2026-11-26 can be running (test/workflows/replay.test.ts).
const sealingBefore20261126 = proxyLocalActivities<SigningActivities>({ startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 1 } });
const SEAL_RETRY_FIRST_MS = 1000;
const SEAL_RETRY_MAX_MS = 30 * 60 * 1000;
// A seal lost with its worker (killed or restarted: its heartbeat stopped) is not the seal failing: the
// first few such losses are tried again after the first delay, so that workers restarting in a loop do
// not push a signed request's seal minutes away (found by bench/chaos.ts). Losses past these back off
// as failures do, in case it is the seal that brings its worker down.
const SEAL_LOSSES_FORGIVEN = 5;

// What each kind of recipient does; a recipient asked to do another's part is refused (NotYourPart).
type Act = 'signing' | 'approving' | 'viewing' | 'declining';
const mayDo: Record<RecipientType, Act[]> = { signer: ['signing', 'declining'], approver: ['approving', 'declining'], viewer: ['viewing'], cc: [] };
const pastOf: Record<RecipientType, string> = { signer: 'signed', approver: 'approved', viewer: 'viewed the documents', cc: 'nothing to do' };
const verbOf: Record<Act, string> = { signing: 'sign', approving: 'approve', viewing: 'view', declining: 'decline' };
const article = (type: RecipientType) => (type === 'approver' ? 'an approver' : `a ${type}`);
type Recipient = { type: RecipientType; status: SignerStatus };

// A change the database refused for good (its data: activities/signingRequest.ts) did not happen: the
// update that asked for it fails with nothing changed, and the caller hears why.
const refusedForGood = (error: unknown) =>
  error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === databaseRefusal
    ? ApplicationFailure.nonRetryable('The database refused to record this change; nothing changed.', changeRefused)
    : error;

/**
 * One signing request, from invitations to the sealed PDF. The workflow holds the decisions (whose
 * turn it is, when to remind, when it expires, which change wins a race); activities record them.
 *
 * One request has one outcome. A terminal change (cancel, decline, expiry) is decided at once, so no
 * signature is accepted after it, and is recorded only after the signatures accepted before it; it
 * becomes the status once recorded, and is taken back if it cannot be, so that the workflow never
 * holds an outcome the database does not. Once every signer has signed or is signing, the request is
 * completing: cancel and decline are refused. Whatever the outcome, the workflow completes with it as
 * its result, and its `SignetStatus` search attribute holds it from the moment it is decided.
 */
export async function signingRequestWorkflow(input: SigningRequestInput): Promise<SigningRequestResult> {
  const { requestId } = input;
  // Every recipient, cc included (it blocks nothing, and is never invited: it gets the sealed documents).
  const recipients = routedRecipients(input).map((recipient) => ({ ...recipient, status: 'pending' as SignerStatus, busy: null as null | Act }));
  const acting = recipients.filter((recipient) => recipient.type !== 'cc');
  let status: RequestStatus = 'pending';
  // The terminal change decided and being recorded: what the request is to everyone until it is recorded or taken back.
  let ending: RequestStatus | null = null;
  const shown = () => ending ?? status;
  let changed = false;
  const expiresAt = new Date(input.expiresAt).getTime();
  let reminderRound = 0;
  let nextReminderAt = input.reminderEveryMs > 0 ? Date.now() + input.reminderEveryMs : Infinity;
  let seal: SigningRequestProgress['sealing'] = null;

  const state = (): SigningRequestState => ({ status: shown(), signers: recipients.map(({ id, status }) => ({ id, status })) });
  // Done: a signer signed, an approver approved, a viewer viewed. Acted: done, or declined.
  const done = (recipient: Recipient) => hasDonePart(recipient.type, recipient.status);
  const acted = (recipient: Recipient) => done(recipient) || recipient.status === 'declined';
  // Whose turn it is: the recipients of the first step with anyone who has not acted.
  const due = () => firstStepOf(acting.filter((recipient) => !acted(recipient)));
  const completing = () => acting.every((recipient) => done(recipient) || (recipient.busy !== null && recipient.busy !== 'declining'));
  const signaturesInFlight = () => acting.some((recipient) => recipient.busy !== null && recipient.busy !== 'declining');
  const progress = (): SigningRequestProgress => ({
    stage: shown() !== 'pending' ? 'finished' : seal ? 'sealing' : 'awaiting_signers',
    waitingFor:
      shown() === 'pending' && !seal
        ? due()
            .filter((recipient) => !recipient.busy)
            .map((recipient) => recipient.id)
        : [],
    sealing: shown() === 'pending' ? seal : null,
  });
  // What the Temporal UI shows of a running request: its step and whom it waits for, by id and type (no personal data).
  const steps = [...new Set(acting.map((recipient) => recipient.routingOrder))].sort((a, b) => a - b);
  const describe = () => {
    const waiting = progress().waitingFor.map((id) => `${id} (${recipients.find((recipient) => recipient.id === id)!.type})`);
    const step = waiting.length ? `Step ${steps.indexOf(due()[0].routingOrder) + 1} of ${steps.length}` : '';
    setCurrentDetails(
      shown() !== 'pending'
        ? `Finished: ${shown()}`
        : seal
          ? `Sealing (${seal.attempts} failed attempts)`
          : `${step}, waiting for ${waiting.join(', ') || 'nobody'}`,
    );
  };
  const setStatus = (next: RequestStatus) => {
    status = next;
    changed = true;
    upsertSearchAttributes([{ key: searchAttributes.status, value: next }]);
  };
  const refuseUnlessOpen = () => {
    if (shown() !== 'pending') throw ApplicationFailure.nonRetryable(`This signing request is ${shown()}.`, 'RequestEnded');
    if (completing()) throw ApplicationFailure.nonRetryable('Every signer has signed: this signing request is being completed.', 'Completing');
  };
  const refuseUnlessDue = (signerId: string, act: Act) => {
    if (shown() !== 'pending') throw ApplicationFailure.nonRetryable(`This signing request is ${shown()}.`, 'RequestEnded');
    const recipient = recipients.find((candidate) => candidate.id === signerId);
    if (!recipient) throw ApplicationFailure.nonRetryable('No such signer in this request.', 'UnknownSigner');
    if (!mayDo[recipient.type].includes(act))
      throw ApplicationFailure.nonRetryable(`This recipient is ${article(recipient.type)}: it does not ${verbOf[act]}.`, 'NotYourPart');
    if (acted(recipient) || recipient.busy)
      throw ApplicationFailure.nonRetryable(
        `This ${recipient.type === 'signer' ? 'signer' : 'recipient'} has already ${recipient.status === 'declined' || recipient.busy === 'declining' ? 'declined' : pastOf[recipient.type]}.`,
        'AlreadyActed',
      );
    if (!due().includes(recipient)) throw ApplicationFailure.nonRetryable('It is not this signer’s turn yet.', 'NotYourTurn');
    return recipient;
  };
  const refused = () => ApplicationFailure.nonRetryable('This signing request has ended.', 'RequestEnded');
  // A recipient's part (sign, approve, view): accepted while due, recorded, then counted; false from the
  // recording means the request had ended in the database.
  const act = async (signerId: string, doing: Act, result: SignerStatus, record: () => Promise<boolean>) => {
    const recipient = refuseUnlessDue(signerId, doing);
    recipient.busy = doing;
    try {
      if (!(await record().catch((error) => Promise.reject(refusedForGood(error))))) throw refused();
      recipient.status = result;
    } finally {
      recipient.busy = null;
      changed = true;
    }
    return state();
  };
  // signing_request.created, once, before any outcome: a cancel can arrive before the first invitation.
  let announcing: Promise<void> | undefined;
  const announce = () => (announcing ??= transitions.announceRequest(requestId));
  // A terminal change: decided now, recorded once the signatures accepted before it are recorded, then
  // the status. False when the database already held another outcome (its conditional update matched no
  // row). A change that could not be recorded is taken back: the request is pending, as in the database.
  const end = async (next: RequestStatus, record: () => Promise<boolean>) => {
    ending = next;
    upsertSearchAttributes([{ key: searchAttributes.status, value: next }]);
    try {
      await condition(() => !signaturesInFlight());
      await announce();
      const recorded = await record();
      status = next;
      return recorded;
    } catch (error) {
      upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
      throw refusedForGood(error);
    } finally {
      ending = null;
      changed = true;
    }
  };

  setHandler(stateQuery, state);
  setHandler(progressQuery, progress);
  setHandler(signUpdate, (sign) => act(sign.signerId, 'signing', 'signed', () => transitions.recordSignature(requestId, sign)), {
    validator: (sign) => void refuseUnlessDue(sign.signerId, 'signing'),
  });
  setHandler(approveUpdate, (approval) => act(approval.signerId, 'approving', 'approved', () => transitions.recordApproval(requestId, approval)), {
    validator: (approval) => void refuseUnlessDue(approval.signerId, 'approving'),
  });
  setHandler(viewDoneUpdate, (view) => act(view.signerId, 'viewing', 'viewed', () => transitions.recordViewStep(requestId, view)), {
    validator: (view) => void refuseUnlessDue(view.signerId, 'viewing'),
  });
  setHandler(
    declineUpdate,
    async (decline) => {
      refuseUnlessOpen();
      const signer = refuseUnlessDue(decline.signerId, 'declining');
      signer.busy = 'declining';
      try {
        if (!(await end('declined', () => transitions.recordDecline(requestId, decline)))) throw refused();
        signer.status = 'declined';
      } finally {
        signer.busy = null;
      }
      return state();
    },
    { validator: (decline) => (refuseUnlessOpen(), void refuseUnlessDue(decline.signerId, 'declining')) },
  );
  setHandler(
    cancelUpdate,
    async ({ reason }) => {
      refuseUnlessOpen();
      if (!(await end('cancelled', () => transitions.recordCancellation(requestId, reason ?? null)))) throw refused();
      return state();
    },
    { validator: (_cancel) => refuseUnlessOpen() },
  );
  setHandler(
    remindUpdate,
    // Whom it may remind now (one e-mail a signer an hour, the account's e-mails an hour) is decided
    // where concurrent rounds of every request meet: in the database, by sendReminders.
    () =>
      activities.sendReminders(
        requestId,
        due().map((signer) => signer.id),
        ++reminderRound,
      ),
    { validator: () => refuseUnlessOpen() },
  );
  setHandler(viewedSignal, async (view) => {
    const signer = recipients.find((candidate) => candidate.id === view.signerId);
    // A viewer's view is its step, recorded by viewDoneUpdate once its page has shown the documents.
    if (!signer || signer.type === 'viewer' || status !== 'pending' || signer.status !== 'notified') return;
    signer.status = 'viewed';
    // A view that cannot be recorded is not one: a signal handler's failure would fail the whole workflow.
    await transitions.recordView(requestId, view).catch(() => {
      if (signer.status === 'viewed') signer.status = 'notified';
    });
  });

  while (status === 'pending') {
    // A terminal change being recorded becomes the status, or is taken back, before anything else is done.
    await condition(() => ending === null);
    if (status !== 'pending') break;
    const toInvite = due().filter((signer) => signer.status === 'pending');
    if (toInvite.length > 0) {
      await activities.sendInvitations.executeWithOptions({ ...emailOptions, summary: `invitations, step ${steps.indexOf(toInvite[0].routingOrder) + 1}` }, [
        requestId,
        toInvite.map((signer) => signer.id),
      ]);
      for (const signer of toInvite) if (signer.status === 'pending') signer.status = 'notified';
    }
    await announce();
    if (acting.every(done)) {
      await sealAndComplete();
      setStatus('completed');
      break;
    }
    const wakeAt = Math.min(expiresAt, nextReminderAt);
    describe();
    const woken = await condition(() => changed || status !== 'pending', Math.max(1, wakeAt - Date.now()), {
      summary: wakeAt === expiresAt ? 'expiry' : 'reminder',
    });
    changed = false;
    if (woken || status !== 'pending' || ending !== null) continue;
    if (Date.now() >= expiresAt) {
      // A signature accepted before the deadline that completes the request wins over expiry.
      if (completing()) {
        await condition(() => !signaturesInFlight());
        continue;
      }
      await end('expired', () => transitions.expireRequest(requestId));
    } else {
      await activities.sendReminders(
        requestId,
        due().map((signer) => signer.id),
        ++reminderRound,
      );
      nextReminderAt = Date.now() + input.reminderEveryMs; // no burst of catch-up reminders after downtime
    }
  }
  await condition(allHandlersFinished);
  await activities.sendClosingMails(requestId);
  // The loop above ends only once the status is an outcome.
  return { outcome: status as SigningRequestOutcome, signers: state().signers };

  async function sealAndComplete() {
    seal = { attempts: 0, lastError: null, nextAttemptAt: null };
    let losses = 0;
    for (;;) {
      describe();
      try {
        await (patched('seal-as-activity') ? sealing : sealingBefore20261126).completeRequest(requestId);
        return;
      } catch (error) {
        const cause = (error as { cause?: Error }).cause ?? (error as Error);
        if (cause instanceof TimeoutFailure && patched('seal-loss-forgiven')) losses++;
        const delay = Math.min(SEAL_RETRY_FIRST_MS * 2 ** Math.max(0, seal.attempts - Math.min(losses, SEAL_LOSSES_FORGIVEN)), SEAL_RETRY_MAX_MS);
        seal = { attempts: seal.attempts + 1, lastError: cause.message, nextAttemptAt: new Date(Date.now() + delay).toISOString() };
        await sleep(delay);
      }
    }
  }
}
