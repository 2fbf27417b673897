import type { Db } from '../db';
import { actorLabel, type Actor } from '../domain/actors';
import { unitOfWork } from '../db/unitOfWork';
import type { EventLog } from '../events/service';
import type { EventType } from '../domain/events';
import { countSigningRequestEnd } from '../metrics';
import { formAnswers, searchableAnswers } from '../documents/form';
import type { ActInput, ClientInfo, DeclineInput, SignInput } from '../domain/signingRequests';
import {
  appendSignerText,
  endSigningRequest,
  eventDocument,
  loadForLifecycle,
  lockSigningRequest,
  markSignerDeclined,
  markSignerViewed,
  recordAuditStep,
  recordSignerPart,
  recordSignerSignature,
} from './store';

// The worker's transitions of a signing request, one command each (completion, which seals first, is
// complete.ts). Each is one transaction that writes its audit step and its event with the change, and is
// safe to repeat. A transition is a conditional update on the request being pending: when another
// outcome is already recorded, it matches no row, writes nothing, and returns false.

export type Loaded = Awaited<ReturnType<typeof loadForLifecycle>>;

/** Records an event of a request, naming it and its documents as every event of a request does. */
export const recordRequestEvent = (events: EventLog, trx: Db, { request, documents }: Loaded, type: EventType, key: string, data: Record<string, unknown>) =>
  events.record(trx, request.accountId, type, { signingRequestId: request.id, ...data, documents: documents.map(eventDocument) }, key);

export interface TransitionDeps {
  db: Db;
  events: EventLog;
}

export async function announceRequest({ db, events }: TransitionDeps, requestId: string) {
  const loaded = await loadForLifecycle(db, requestId);
  const { request, signers } = loaded;
  await unitOfWork(db, (trx) =>
    recordRequestEvent(events, trx, loaded, 'signing_request.created', `${requestId}:created`, {
      documentId: request.documentId,
      title: request.title,
      signingOrder: request.signingOrder,
      signers: signers.map((signer) => ({ id: signer.id, name: signer.name, email: signer.email, order: signer.order })),
      createdAt: request.createdAt.toISOString(),
      ...(request.sentBy ? { actor: request.sentBy } : {}),
    }),
  );
}

export async function recordView({ db, events }: TransitionDeps, requestId: string, view: { signerId: string } & ClientInfo) {
  const loaded = await loadForLifecycle(db, requestId);
  const { signers } = loaded;
  const signer = signers.find((candidate) => candidate.id === view.signerId);
  if (!signer) return;
  await unitOfWork(db, async (trx) => {
    if (!(await markSignerViewed(trx, signer.id))) return;
    await recordAuditStep(trx, requestId, { action: 'viewed', key: `viewed:${signer.id}`, signerId: signer.id, actor: signer.email, client: view });
    await recordRequestEvent(events, trx, loaded, 'signer.viewed', `${signer.id}:viewed`, {
      signerId: signer.id,
      email: signer.email,
      viewedAt: new Date().toISOString(),
    });
  });
}

/** True when the signature is recorded (now or by an earlier try); false when the request has ended. */
export async function recordSignature({ db, events }: TransitionDeps, requestId: string, sign: SignInput): Promise<boolean> {
  const loaded = await loadForLifecycle(db, requestId);
  const { request, signers } = loaded;
  const signer = signers.find((candidate) => candidate.id === sign.signerId)!;
  if (signer.status === 'signed') return true; // a retry: already recorded
  const answers = formAnswers(signer.fields, sign);
  const words = searchableAnswers(answers);
  return unitOfWork(db, async (trx) => {
    // The request's row before the signer's, as a decline takes them: two transactions never wait on each other.
    if (words) await lockSigningRequest(trx, requestId);
    const signedAt = new Date();
    const signed = await recordSignerSignature(trx, requestId, signer.id, {
      signedAt,
      signature: { ...sign.signature, fieldValues: sign.fieldValues ?? {}, hiddenFields: sign.hiddenFields ?? [] },
      ipAddress: sign.ipAddress ?? null,
      userAgent: sign.userAgent ?? null,
    });
    if (!signed) return false;
    if (words) await appendSignerText(trx, requestId, words);
    await recordAuditStep(trx, requestId, {
      action: 'signed',
      key: `signed:${signer.id}`,
      signerId: signer.id,
      actor: signer.email,
      client: sign,
      data: { signatureType: sign.signature.type },
    });
    await recordRequestEvent(events, trx, loaded, 'signer.signed', `${signer.id}:signed`, {
      documentId: request.documentId,
      signerId: signer.id,
      name: signer.name,
      email: signer.email,
      signedAt: signedAt.toISOString(),
      fields: answers,
    });
    return true;
  });
}

/** An approver's approval; true when recorded (now or by an earlier try), false when the request has ended. */
export const recordApproval = (deps: TransitionDeps, requestId: string, approval: ActInput) =>
  recordPart(deps, requestId, approval, { status: 'approved', from: ['pending', 'notified', 'viewed'], at: 'approved_at', action: 'approved' });

/**
 * A viewer's step: its page has shown the documents, written as its view (audit step and signer.viewed
 * event); true once recorded, false when the request has ended.
 */
export const recordViewStep = (deps: TransitionDeps, requestId: string, view: ActInput) =>
  recordPart(deps, requestId, view, { status: 'viewed', from: ['pending', 'notified'], at: 'viewed_at', action: 'viewed' });

/** One decline ends the request for everyone. */
export async function recordDecline({ db, events }: TransitionDeps, requestId: string, decline: DeclineInput): Promise<boolean> {
  const loaded = await loadForLifecycle(db, requestId);
  const { request, signers } = loaded;
  const signer = signers.find((candidate) => candidate.id === decline.signerId)!;
  if (signer.status === 'declined' && request.status === 'declined') return true; // a retry
  return unitOfWork(db, async (trx) => {
    const declinedAt = new Date();
    if (!(await endSigningRequest(trx, requestId, 'declined'))) return false;
    await markSignerDeclined(trx, signer.id, {
      declinedAt,
      reason: decline.reason,
      ipAddress: decline.ipAddress ?? null,
      userAgent: decline.userAgent ?? null,
    });
    await recordAuditStep(trx, requestId, {
      action: 'declined',
      key: `declined:${signer.id}`,
      signerId: signer.id,
      actor: signer.email,
      client: decline,
      data: { reason: decline.reason },
    });
    const data = { documentId: request.documentId, signerId: signer.id, reason: decline.reason, declinedAt: declinedAt.toISOString() };
    await recordRequestEvent(events, trx, loaded, 'signer.declined', `${signer.id}:declined`, { ...data, name: signer.name, email: signer.email });
    await recordRequestEvent(events, trx, loaded, 'signing_request.declined', `${requestId}:declined`, data);
    return true;
  }).then(countSigningRequestEnd('declined'));
}

export async function recordCancellation(
  { db, events }: TransitionDeps,
  requestId: string,
  reason: string | null,
  actor: Actor | null = null,
): Promise<boolean> {
  const loaded = await loadForLifecycle(db, requestId);
  const { request, owner } = loaded;
  if (request.status === 'cancelled') return true; // a retry
  return unitOfWork(db, async (trx) => {
    if (!(await endSigningRequest(trx, requestId, 'cancelled', { cancel_reason: reason }))) return false;
    await recordAuditStep(trx, requestId, {
      action: 'cancelled',
      key: `cancelled:${requestId}`,
      actor: actorLabel(actor, owner.email),
      data: { reason },
    });
    await recordRequestEvent(events, trx, loaded, 'signing_request.cancelled', `${requestId}:cancelled`, {
      documentId: request.documentId,
      reason,
      ...(actor ? { actor } : {}),
      cancelledAt: new Date().toISOString(),
    });
    return true;
  }).then(countSigningRequestEnd('cancelled'));
}

export async function expireRequest({ db, events }: TransitionDeps, requestId: string): Promise<boolean> {
  const loaded = await loadForLifecycle(db, requestId);
  const { request } = loaded;
  if (request.status === 'expired') return true; // a retry
  return unitOfWork(db, async (trx) => {
    if (!(await endSigningRequest(trx, requestId, 'expired'))) return false;
    await recordAuditStep(trx, requestId, { action: 'expired', key: `expired:${requestId}` });
    await recordRequestEvent(events, trx, loaded, 'signing_request.expired', `${requestId}:expired`, {
      documentId: request.documentId,
      expiredAt: new Date().toISOString(),
    });
    return true;
  }).then(countSigningRequestEnd('expired'));
}

// A recipient's part that is a step and nothing more (an approval, a viewer's view): one conditional
// update while the request is pending, its audit step and its event (signer.approved, signer.viewed).
async function recordPart(
  { db, events }: TransitionDeps,
  requestId: string,
  act: ActInput,
  part: { status: 'approved' | 'viewed'; from: string[]; at: 'approved_at' | 'viewed_at'; action: 'approved' | 'viewed' },
): Promise<boolean> {
  const loaded = await loadForLifecycle(db, requestId);
  const signer = loaded.signers.find((candidate) => candidate.id === act.signerId)!;
  if (signer.status === part.status) return true; // a retry: already recorded
  return unitOfWork(db, async (trx) => {
    const at = new Date();
    const recorded = await recordSignerPart(trx, requestId, signer.id, {
      status: part.status,
      from: part.from,
      at: part.at,
      when: at,
      ipAddress: act.ipAddress ?? null,
      userAgent: act.userAgent ?? null,
    });
    if (!recorded) return false;
    await recordAuditStep(trx, requestId, { action: part.action, key: `${part.action}:${signer.id}`, signerId: signer.id, actor: signer.email, client: act });
    const when = part.status === 'approved' ? { approvedAt: at.toISOString() } : { viewedAt: at.toISOString() };
    await recordRequestEvent(events, trx, loaded, `signer.${part.status}`, `${signer.id}:${part.action}`, {
      signerId: signer.id,
      name: signer.name,
      email: signer.email,
      ...when,
    });
    return true;
  });
}
