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
import type { SigningRequestActivities } from './activities';
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
  type SealingProgress,
  type SealService,
  sealServiceUnavailable,
  type SignerStatus,
  type SigningRequestInput,
  type SigningRequestProgress,
  type SigningRequestState,
} from '../src/domain/signingRequests';

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 500 };

// E-mails: retried with backoff for days; every activity is idempotent and heartbeats, so one lost
// with its worker is retried within the heartbeat timeout.
const emailOptions = { startToCloseTimeout: '2 minutes', heartbeatTimeout: '15 seconds', retry } as const;
const activities = proxyActivities<SigningRequestActivities>(emailOptions);

// Transitions (one short database transaction each) are regular activities, scheduled once the update
// that asks for them is accepted into the history: a local activity in an update handler commits before
// the workflow task that accepts the update, so a worker killed in between left the change in the
// database and the update nowhere (found by bench/chaos.ts), and several local activities in one task
// could resume in another order on replay. They are idempotent: a retry changes nothing.
const transitions = proxyActivities<SigningRequestActivities>({ startToCloseTimeout: '1 minute', heartbeatTimeout: '15 seconds', retry });

// Sealing retries are the workflow's own, so that `progress` can say how many failed, why, and when
// the next one runs: a request that cannot be sealed is visible, never a silent retry loop. Sealing is
// a regular activity, scheduled with the answer to the last signature's update: a worker hands a
// workflow task back only once its local activities are done, so a local one held that signer's 200
// behind the seal. The worker that completes the task is handed the activity in the same reply (eager
// execution), so the seal starts at once without a trip through matching.
const sealing = proxyActivities<SigningRequestActivities>({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '15 seconds', retry: { maximumAttempts: 1 } });
// Requests whose history already sealed (or tried to) with a local activity replay it as one; remove
// with the patch once no request begun before 2026-11-26 can be running (test/workflows/replay.test.ts).
const sealingBefore20261126 = proxyLocalActivities<SigningRequestActivities>({ startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 1 } });
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
  const run = new SigningRequestRun(input);
  run.answerMessages();
  return run.toOutcome();
}

type RunRecipient = ReturnType<typeof routedRecipients>[number] & { status: SignerStatus; busy: null | Act };

// Done: a signer signed, an approver approved, a viewer viewed. Acted: done, or declined.
const done = (recipient: Recipient) => hasDonePart(recipient.type, recipient.status);
const acted = (recipient: Recipient) => done(recipient) || recipient.status === 'declined';
const refused = () => ApplicationFailure.nonRetryable('This signing request has ended.', 'RequestEnded');

/** One run of the workflow: what it holds of the request, the messages it answers, and its main loop. */
class SigningRequestRun {
  private readonly requestId: string;
  // Every recipient, cc included (it blocks nothing, and is never invited: it gets the sealed documents).
  private readonly recipients: RunRecipient[];
  private readonly acting: RunRecipient[];
  private readonly steps: number[];
  private readonly expiresAt: number;
  private status: RequestStatus = 'pending';
  // The terminal change decided and being recorded: what the request is to everyone until it is recorded or taken back.
  private ending: RequestStatus | null = null;
  private changed = false;
  private reminderRound = 0;
  private nextReminderAt: number;
  private seal: SigningRequestProgress['sealing'] = null;
  private announcing: Promise<void> | undefined;

  constructor(private readonly input: SigningRequestInput) {
    this.requestId = input.requestId;
    this.recipients = routedRecipients(input).map((recipient) => ({ ...recipient, status: 'pending' as SignerStatus, busy: null as null | Act }));
    this.acting = this.recipients.filter((recipient) => recipient.type !== 'cc');
    this.steps = [...new Set(this.acting.map((recipient) => recipient.routingOrder))].sort((a, b) => a - b);
    this.expiresAt = new Date(input.expiresAt).getTime();
    this.nextReminderAt = input.reminderEveryMs > 0 ? Date.now() + input.reminderEveryMs : Infinity;
  }

  private shown() {
    return this.ending ?? this.status;
  }

  private state(): SigningRequestState {
    return { status: this.shown(), signers: this.recipients.map(({ id, status }) => ({ id, status })) };
  }

  /** Whose turn it is: the recipients of the first step with anyone who has not acted. */
  private due() {
    return firstStepOf(this.acting.filter((recipient) => !acted(recipient)));
  }

  private completing() {
    return this.acting.every((recipient) => done(recipient) || (recipient.busy !== null && recipient.busy !== 'declining'));
  }

  private signaturesInFlight() {
    return this.acting.some((recipient) => recipient.busy !== null && recipient.busy !== 'declining');
  }

  private progress(): SigningRequestProgress {
    const shown = this.shown();
    return {
      stage: shown !== 'pending' ? 'finished' : this.seal ? 'sealing' : 'awaiting_signers',
      waitingFor:
        shown === 'pending' && !this.seal
          ? this.due()
              .filter((recipient) => !recipient.busy)
              .map((recipient) => recipient.id)
          : [],
      sealing: shown === 'pending' ? this.seal : null,
    };
  }

  /** What the Temporal UI shows of a running request: its step and whom it waits for, by id and type (no personal data). */
  private describe() {
    const waiting = this.progress().waitingFor.map((id) => `${id} (${this.recipients.find((recipient) => recipient.id === id)!.type})`);
    const step = waiting.length ? `Step ${this.steps.indexOf(this.due()[0].routingOrder) + 1} of ${this.steps.length}` : '';
    setCurrentDetails(
      this.shown() !== 'pending'
        ? `Finished: ${this.shown()}`
        : this.seal
          ? `Sealing (${this.seal.attempts} failed attempts${this.seal.waitingOn ? `, waiting for the ${this.seal.waitingOn.service} since ${this.seal.waitingOn.since}` : ''})`
          : `${step}, waiting for ${waiting.join(', ') || 'nobody'}`,
    );
  }

  private setStatus(next: RequestStatus) {
    this.status = next;
    this.changed = true;
    upsertSearchAttributes([{ key: searchAttributes.status, value: next }]);
  }

  private refuseUnlessOpen() {
    if (this.shown() !== 'pending') throw ApplicationFailure.nonRetryable(`This signing request is ${this.shown()}.`, 'RequestEnded');
    if (this.completing()) throw ApplicationFailure.nonRetryable('Every signer has signed: this signing request is being completed.', 'Completing');
  }

  private refuseUnlessDue(signerId: string, act: Act) {
    if (this.shown() !== 'pending') throw ApplicationFailure.nonRetryable(`This signing request is ${this.shown()}.`, 'RequestEnded');
    const recipient = this.recipients.find((candidate) => candidate.id === signerId);
    if (!recipient) throw ApplicationFailure.nonRetryable('No such signer in this request.', 'UnknownSigner');
    if (!mayDo[recipient.type].includes(act))
      throw ApplicationFailure.nonRetryable(`This recipient is ${article(recipient.type)}: it does not ${verbOf[act]}.`, 'NotYourPart');
    if (acted(recipient) || recipient.busy)
      throw ApplicationFailure.nonRetryable(
        `This ${recipient.type === 'signer' ? 'signer' : 'recipient'} has already ${recipient.status === 'declined' || recipient.busy === 'declining' ? 'declined' : pastOf[recipient.type]}.`,
        'AlreadyActed',
      );
    if (!this.due().includes(recipient)) throw ApplicationFailure.nonRetryable('It is not this signer’s turn yet.', 'NotYourTurn');
    return recipient;
  }

  /**
   * A recipient's part (sign, approve, view): accepted while due, recorded, then counted; false from the
   * recording means the request had ended in the database.
   */
  private async act(signerId: string, doing: Act, result: SignerStatus, record: () => Promise<boolean>) {
    const recipient = this.refuseUnlessDue(signerId, doing);
    recipient.busy = doing;
    try {
      if (!(await record().catch((error) => Promise.reject(refusedForGood(error))))) throw refused();
      recipient.status = result;
    } finally {
      recipient.busy = null;
      this.changed = true;
    }
    return this.state();
  }

  /** signing_request.created, once, before any outcome: a cancel can arrive before the first invitation. */
  private announce() {
    return (this.announcing ??= transitions.announceRequest(this.requestId));
  }

  /**
   * A terminal change: decided now, recorded once the signatures accepted before it are recorded, then
   * the status. False when the database already held another outcome (its conditional update matched no
   * row). A change that could not be recorded is taken back: the request is pending, as in the database.
   */
  private async end(next: RequestStatus, record: () => Promise<boolean>) {
    this.ending = next;
    upsertSearchAttributes([{ key: searchAttributes.status, value: next }]);
    try {
      await condition(() => !this.signaturesInFlight());
      await this.announce();
      const recorded = await record();
      this.status = next;
      return recorded;
    } catch (error) {
      upsertSearchAttributes([{ key: searchAttributes.status, value: this.status }]);
      throw refusedForGood(error);
    } finally {
      this.ending = null;
      this.changed = true;
    }
  }

  /** The queries, updates and signal the request answers while it runs. */
  answerMessages() {
    const { requestId } = this;
    setHandler(stateQuery, () => this.state());
    setHandler(progressQuery, () => this.progress());
    setHandler(signUpdate, (sign) => this.act(sign.signerId, 'signing', 'signed', () => transitions.recordSignature(requestId, sign)), {
      validator: (sign) => void this.refuseUnlessDue(sign.signerId, 'signing'),
    });
    setHandler(approveUpdate, (approval) => this.act(approval.signerId, 'approving', 'approved', () => transitions.recordApproval(requestId, approval)), {
      validator: (approval) => void this.refuseUnlessDue(approval.signerId, 'approving'),
    });
    setHandler(viewDoneUpdate, (view) => this.act(view.signerId, 'viewing', 'viewed', () => transitions.recordViewStep(requestId, view)), {
      validator: (view) => void this.refuseUnlessDue(view.signerId, 'viewing'),
    });
    setHandler(
      declineUpdate,
      async (decline) => {
        this.refuseUnlessOpen();
        const signer = this.refuseUnlessDue(decline.signerId, 'declining');
        signer.busy = 'declining';
        try {
          if (!(await this.end('declined', () => transitions.recordDecline(requestId, decline)))) throw refused();
          signer.status = 'declined';
        } finally {
          signer.busy = null;
        }
        return this.state();
      },
      { validator: (decline) => (this.refuseUnlessOpen(), void this.refuseUnlessDue(decline.signerId, 'declining')) },
    );
    setHandler(
      cancelUpdate,
      async ({ reason, actor }) => {
        this.refuseUnlessOpen();
        if (!(await this.end('cancelled', () => transitions.recordCancellation(requestId, reason ?? null, actor ?? null)))) throw refused();
        return this.state();
      },
      { validator: (_cancel) => this.refuseUnlessOpen() },
    );
    setHandler(
      remindUpdate,
      // Whom it may remind now (one e-mail a signer an hour, the account's e-mails an hour) is decided
      // where concurrent rounds of every request meet: in the database, by sendReminders.
      () =>
        activities.sendReminders(
          requestId,
          this.due().map((signer) => signer.id),
          ++this.reminderRound,
        ),
      { validator: () => this.refuseUnlessOpen() },
    );
    setHandler(viewedSignal, async (view) => {
      const signer = this.recipients.find((candidate) => candidate.id === view.signerId);
      // A viewer's view is its step, recorded by viewDoneUpdate once its page has shown the documents.
      if (!signer || signer.type === 'viewer' || this.status !== 'pending' || signer.status !== 'notified') return;
      signer.status = 'viewed';
      // A view that cannot be recorded is not one: a signal handler's failure would fail the whole workflow.
      await transitions.recordView(requestId, view).catch(() => {
        if (signer.status === 'viewed') signer.status = 'notified';
      });
    });
  }

  /** Invites whose turn it is, reminds, expires and seals, until the request has an outcome; then closes it. */
  async toOutcome(): Promise<SigningRequestResult> {
    const { requestId } = this;
    while (this.status === 'pending') {
      // A terminal change being recorded becomes the status, or is taken back, before anything else is done.
      await condition(() => this.ending === null);
      if (this.status !== 'pending') break;
      const toInvite = this.due().filter((signer) => signer.status === 'pending');
      if (toInvite.length > 0) {
        await activities.sendInvitations.executeWithOptions(
          { ...emailOptions, summary: `invitations, step ${this.steps.indexOf(toInvite[0].routingOrder) + 1}` },
          [requestId, toInvite.map((signer) => signer.id)],
        );
        for (const signer of toInvite) if (signer.status === 'pending') signer.status = 'notified';
      }
      await this.announce();
      if (this.acting.every(done)) {
        await this.sealAndComplete();
        this.setStatus('completed');
        break;
      }
      const wakeAt = Math.min(this.expiresAt, this.nextReminderAt);
      this.describe();
      const woken = await condition(() => this.changed || this.status !== 'pending', Math.max(1, wakeAt - Date.now()), {
        summary: wakeAt === this.expiresAt ? 'expiry' : 'reminder',
      });
      this.changed = false;
      if (woken || this.status !== 'pending' || this.ending !== null) continue;
      if (Date.now() >= this.expiresAt) {
        // A signature accepted before the deadline that completes the request wins over expiry.
        if (this.completing()) {
          await condition(() => !this.signaturesInFlight());
          continue;
        }
        await this.end('expired', () => transitions.expireRequest(requestId));
      } else {
        await activities.sendReminders(
          requestId,
          this.due().map((signer) => signer.id),
          ++this.reminderRound,
        );
        this.nextReminderAt = Date.now() + this.input.reminderEveryMs; // no burst of catch-up reminders after downtime
      }
    }
    await condition(allHandlersFinished);
    await activities.sendClosingMails(requestId);
    // The loop above ends only once the status is an outcome.
    return { outcome: this.status as SigningRequestOutcome, signers: this.state().signers };
  }

  /** The service a failed seal waits for (a timestamp authority, a revocation responder), since its first failure in a row. */
  private waitingOn(cause: Error): SealingProgress['waitingOn'] {
    if (!(cause instanceof ApplicationFailure) || cause.type !== sealServiceUnavailable) return null;
    const { service, url } = cause.details?.[0] as { service: SealService; url: string | null };
    const before = this.seal?.waitingOn;
    return { service, url, since: before?.service === service ? before.since : new Date().toISOString() };
  }

  private async sealAndComplete() {
    this.seal = { attempts: 0, lastError: null, nextAttemptAt: null };
    let losses = 0;
    for (;;) {
      this.describe();
      try {
        await (patched('seal-as-activity') ? sealing : sealingBefore20261126).completeRequest(this.requestId);
        return;
      } catch (error) {
        const cause = (error as { cause?: Error }).cause ?? (error as Error);
        if (cause instanceof TimeoutFailure && patched('seal-loss-forgiven')) losses++;
        const delay = Math.min(SEAL_RETRY_FIRST_MS * 2 ** Math.max(0, this.seal.attempts - Math.min(losses, SEAL_LOSSES_FORGIVEN)), SEAL_RETRY_MAX_MS);
        const nextAttemptAt = new Date(Date.now() + delay).toISOString();
        this.seal = { attempts: this.seal.attempts + 1, lastError: cause.message, nextAttemptAt, waitingOn: this.waitingOn(cause) };
        await sleep(delay);
      }
    }
  }
}
