import type { Config } from '../config';
import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import type { EventLog } from '../events/service';
import { type EventType } from '../domain/events';
import { mailSender, type MailMessage, type MailTransport } from '../mail';
import { countOwedMail, openMailHour } from '../mail/allowance';
import { countSigningRequestEnd } from '../metrics';
import { cancelledMail, completedMail, declinedMail, invitationMail, reminderMail, type MailBrand, type RenderedMail } from '../mail/templates';
import { mailBrandOfAccount } from '../accounts/branding';
import { sealDocumentOnThread } from '../pdf/sealThread';
import type { SignatureMark, SignatureStamp } from '../pdf/stamp';
import { loadSealCertificate } from '../pdf/sealCertificate';
import { emailLinkToken, hashToken, loadTokenSecret } from './tokens';
import { hasActed, type ActInput, type ClientInfo, type DeclineInput, type RecipientType, type RemindOutcome, type SignInput } from '../domain/signingRequests';
import { invitationMailKey, reminderMailKey, remindable } from './reminders';
import { eventDocument, loadForLifecycle, recordAuditStep, type RequestDocument, type SigningRequest } from './store';

type Loaded = Awaited<ReturnType<typeof loadForLifecycle>>;

export interface LifecycleDeps {
  db: Db;
  events: EventLog;
  config: Pick<Config, 'publicUrl' | 'dataDir' | 'MAIL_FROM' | 'SIGNING_TOKEN_SECRET' | 'SEAL_P12_PATH' | 'SEAL_P12_PASSWORD' | 'RATE_LIMIT_MULTIPLIER'>;
  mail: MailTransport;
}

/** The file name of the sealed PDF: "<name> (signed).pdf". */
export const signedFileName = (fileName: string) => `${fileName.replace(/\.pdf$/i, '')} (signed).pdf`;

/** The sealed files' names, in the documents' order, made distinct where two documents share a name ("… (signed) (2).pdf"). */
export function signedFileNames(documents: { fileName: string }[]): string[] {
  const taken = new Set<string>();
  return documents.map(({ fileName }) => {
    const base = signedFileName(fileName);
    let name = base;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = base.replace(/\.pdf$/, ` (${n}).pdf`);
    taken.add(name.toLowerCase());
    return name;
  });
}

const certificateDocument = (document: RequestDocument) => ({
  name: document.fileName,
  sha256: document.originalSha256,
  pageCount: document.pageCount ?? undefined,
});

/**
 * What is stamped on one document of the request: each signer's fields on it. A signer who was given no
 * fields signs on the signatures page of every document; one whose fields are all on other documents
 * leaves no mark on this one (the certificate of completion lists every signer on every document).
 */
function stampsOn(document: RequestDocument, { signers, documents }: Loaded): SignatureStamp[] {
  const firstDocumentId = documents[0].documentId;
  return signers.flatMap((signer) => {
    if (signer.recipientType !== 'signer') return [];
    const signature = signer.signature!;
    // A field's value is the sender's prefill (fixed), else what the signer entered, keyed by the field's position in the signer's list.
    const fields = signer.fields
      ?.map((field, index) => ({ ...field, value: field.value ?? signature.fieldValues?.[String(index)] }))
      .filter((field) => (field.documentId ?? firstDocumentId) === document.documentId);
    if (signer.fields?.length && !fields?.length) return [];
    const mark: SignatureMark = signature.type === 'drawn' ? { type: 'drawn', pngDataUrl: signature.value } : { type: 'typed', value: signature.value };
    return [{ signerName: signer.name, signerEmail: signer.email, signedAt: signer.signedAt!, signature: mark, fields }];
  });
}

type Recipient = { email: string; name?: string | null };

/**
 * The worker's commands on a signing request, one per transition. Each is one transaction that writes
 * its audit step and its event with the change, and is safe to repeat. A transition is a conditional
 * update on the request being pending: when another outcome is already recorded, it matches no row,
 * writes nothing, and returns false.
 */
export function signingRequestLifecycle({ db, events, config, mail }: LifecycleDeps) {
  // Every event of a request names it and its documents.
  const event = (trx: Db, { request, documents }: Loaded, type: EventType, key: string, data: Record<string, unknown>) =>
    events.record(trx, request.accountId, type, { signingRequestId: request.id, ...data, documents: documents.map(eventDocument) }, key);
  const tokenSecret = loadTokenSecret(config.SIGNING_TOKEN_SECRET, config.dataDir);
  const sender = mailSender(config);
  // An account's brand names the sender of its e-mails to signers, in place of MAIL_FROM's name.
  const brandOf = (accountId: string) => mailBrandOfAccount(db, accountId, config.publicUrl);
  const sendMail = (key: string, to: Recipient, rendered: RenderedMail, brand: MailBrand, attachments?: MailMessage['attachments']) =>
    mail.send({
      idempotencyKey: key,
      to: to.email,
      toName: to.name ?? undefined,
      ...sender,
      ...(brand.fromName ? { fromName: brand.fromName } : {}),
      ...rendered,
      attachments,
    });
  // The sealed PDFs of a completed request, as attachments, in the documents' order.
  const sealedAttachments = async (requestId: string, documents: RequestDocument[]): Promise<NonNullable<MailMessage['attachments']>> => {
    const rows = await db('sealed_documents').where({ signing_request_id: requestId }).select('document_id', 'content');
    const names = signedFileNames(documents);
    return documents.map((document, index) => ({
      filename: names[index],
      contentType: 'application/pdf',
      content: rows.find((row) => row.document_id === document.documentId).content,
    }));
  };
  const signingUrl = (signerId: string) => `${config.publicUrl}/sign/${emailLinkToken(tokenSecret, signerId)}`;
  // Changes the request from pending to `status`; false (and nothing written) when it is no longer pending.
  const endRequest = async (trx: Db, requestId: string, status: string, extra: Record<string, unknown> = {}) =>
    (await trx('signing_requests')
      .where({ id: requestId, status: 'pending' })
      .update({ status, completed_at: trx.fn.now(), updated_at: trx.fn.now(), ...extra })) > 0;

  // What an e-mail with a signer's link says, and the link's token, which the signing page looks up.
  const linkMail = (
    request: SigningRequest,
    owner: { email: string; name: string | null },
    signer: { id: string; name: string; recipientType: RecipientType },
    brand: MailBrand,
  ) => ({
    brand,
    part: signer.recipientType === 'cc' ? undefined : signer.recipientType,
    signerName: signer.name,
    sender: owner,
    title: request.title,
    message: request.message,
    signingUrl: signingUrl(signer.id),
    expiresAt: request.expiresAt,
  });
  const issueLink = (trx: Db, request: SigningRequest, signerId: string) =>
    trx('signer_tokens')
      .insert({ token_hash: hashToken(emailLinkToken(tokenSecret, signerId)), signer_id: signerId, expires_at: request.expiresAt })
      .onConflict('token_hash')
      .ignore();

  // A recipient's part that is a step and nothing more (an approval, a viewer's view): one conditional
  // update while the request is pending, its audit step and its event (signer.approved, signer.viewed).
  const recordPart = async (
    requestId: string,
    act: ActInput,
    part: { status: 'approved' | 'viewed'; from: string[]; at: 'approved_at' | 'viewed_at'; action: 'approved' | 'viewed' },
  ): Promise<boolean> => {
    const loaded = await loadForLifecycle(db, requestId);
    const signer = loaded.signers.find((candidate) => candidate.id === act.signerId)!;
    if (signer.status === part.status) return true; // a retry: already recorded
    return unitOfWork(db, async (trx) => {
      const at = new Date();
      const updated = await trx('signers')
        .where({ id: signer.id })
        .whereIn('status', part.from)
        .whereExists(trx('signing_requests').where({ id: requestId, status: 'pending' }).select(trx.raw('1')))
        .update({ status: part.status, [part.at]: at, ip_address: act.ipAddress ?? null, user_agent: act.userAgent ?? null });
      if (updated === 0) return false;
      await recordAuditStep(trx, requestId, { action: part.action, key: `${part.action}:${signer.id}`, signerId: signer.id, actor: signer.email, client: act });
      const when = part.status === 'approved' ? { approvedAt: at.toISOString() } : { viewedAt: at.toISOString() };
      await event(trx, loaded, `signer.${part.status}`, `${signer.id}:${part.action}`, {
        signerId: signer.id,
        name: signer.name,
        email: signer.email,
        ...when,
      });
      return true;
    });
  };

  return {
    /** Invites signers whose turn it is. Owed, never refused: the request paid for its first invitations when it was made. */
    async sendInvitations(requestId: string, signerIds: string[]) {
      const loaded = await loadForLifecycle(db, requestId);
      const { request, signers, owner } = loaded;
      const brand = await brandOf(request.accountId);
      for (const signer of signers.filter((candidate) => signerIds.includes(candidate.id) && !hasActed(candidate))) {
        const key = invitationMailKey(signer.id);
        await unitOfWork(db, async (trx) => {
          await issueLink(trx, request, signer.id);
          const notified = await trx('signers').where({ id: signer.id, status: 'pending' }).update({ status: 'notified', notified_at: trx.fn.now() });
          // The invitation starts the signer's hour without a reminder; a retry does not move it.
          await trx('signers').where({ id: signer.id }).whereNull('last_mailed_at').update({ last_mailed_at: trx.fn.now() });
          await recordAuditStep(trx, requestId, { action: 'invitation_sent', key, signerId: signer.id, data: { email: signer.email } });
          await countOwedMail(trx, request.accountId, key);
          if (notified > 0) {
            await event(trx, loaded, 'signer.notified', `${signer.id}:notified`, {
              signerId: signer.id,
              name: signer.name,
              email: signer.email,
              notifiedAt: new Date().toISOString(),
            });
          }
        });
        await sendMail(key, signer, invitationMail(linkMail(request, owner, signer, brand)), brand);
      }
    },

    /**
     * Reminds those of `signerIds` (whose turn it is) who may have a reminder now: one e-mail with their
     * link an hour (the invitation included), within the account's e-mails this hour, in signing order.
     * Decided in one transaction that locks the account's hour and the signers' rows, so that concurrent
     * rounds (15 reminds at once, or a remind and a scheduled reminder) remind each signer once. A retry
     * of a round reminds again whom it chose before (the same e-mails, sent once) and no one else.
     */
    async sendReminders(requestId: string, signerIds: string[], round: number): Promise<RemindOutcome> {
      const loaded = await loadForLifecycle(db, requestId);
      const { request, signers, owner, plan } = loaded;
      const keyOf = (signerId: string) => reminderMailKey(signerId, round);
      const outcome = await unitOfWork(db, async (trx): Promise<RemindOutcome> => {
        const hour = await openMailHour(trx, { id: request.accountId, plan }, config.RATE_LIMIT_MULTIPLIER);
        const open: { id: string; lastMailedAt: Date | null }[] = (
          await trx('signers')
            .whereIn('id', signerIds)
            .where({ signing_request_id: requestId })
            .whereNotIn('status', ['signed', 'declined'])
            .orderBy('order')
            .forUpdate()
            .select('id', 'last_mailed_at')
        ).map((row) => ({ id: row.id, lastMailedAt: row.last_mailed_at }));
        const chosenBefore = new Set<string>(
          await trx('audit_trail')
            .whereIn(
              'idempotency_key',
              open.map((signer) => keyOf(signer.id)),
            )
            .pluck('signer_id'),
        );
        const { ready, nextAt } = remindable(
          open.filter((signer) => !chosenBefore.has(signer.id)),
          hour.now,
        );
        const chosen = ready.slice(0, hour.remaining);
        await hour.take(chosen.map((signer) => keyOf(signer.id)));
        for (const { id } of chosen) {
          const { email } = signers.find((signer) => signer.id === id)!;
          await trx('signers').where({ id }).update({ last_mailed_at: hour.now });
          await issueLink(trx, request, id);
          await recordAuditStep(trx, requestId, { action: 'reminder_sent', key: keyOf(id), signerId: id, data: { email } });
        }
        const remindedSignerIds = open.filter((signer) => chosenBefore.has(signer.id) || chosen.includes(signer)).map((signer) => signer.id);
        if (remindedSignerIds.length > 0) return { remindedSignerIds };
        if (ready.length > 0) return { remindedSignerIds, limitedBy: { limit: 'account', perHour: hour.limit, retryAt: (await hour.fitsAt(1)).toISOString() } };
        return nextAt ? { remindedSignerIds, limitedBy: { limit: 'signer', perHour: 1, retryAt: nextAt.toISOString() } } : { remindedSignerIds };
      });
      const brand = await brandOf(request.accountId);
      for (const signer of signers.filter((candidate) => outcome.remindedSignerIds.includes(candidate.id))) {
        await sendMail(keyOf(signer.id), signer, reminderMail(linkMail(request, owner, signer, brand)), brand);
      }
      return outcome;
    },

    async announceRequest(requestId: string) {
      const loaded = await loadForLifecycle(db, requestId);
      const { request, signers } = loaded;
      await unitOfWork(db, (trx) =>
        event(trx, loaded, 'signing_request.created', `${requestId}:created`, {
          documentId: request.documentId,
          title: request.title,
          signingOrder: request.signingOrder,
          signers: signers.map((signer) => ({ id: signer.id, name: signer.name, email: signer.email, order: signer.order })),
          createdAt: request.createdAt.toISOString(),
        }),
      );
    },

    async recordView(requestId: string, view: { signerId: string } & ClientInfo) {
      const loaded = await loadForLifecycle(db, requestId);
      const { signers } = loaded;
      const signer = signers.find((candidate) => candidate.id === view.signerId);
      if (!signer) return;
      await unitOfWork(db, async (trx) => {
        const viewed = await trx('signers')
          .where({ id: signer.id })
          .whereIn('status', ['pending', 'notified'])
          .update({ status: 'viewed', viewed_at: trx.fn.now() });
        if (viewed === 0) return;
        await recordAuditStep(trx, requestId, { action: 'viewed', key: `viewed:${signer.id}`, signerId: signer.id, actor: signer.email, client: view });
        await event(trx, loaded, 'signer.viewed', `${signer.id}:viewed`, { signerId: signer.id, email: signer.email, viewedAt: new Date().toISOString() });
      });
    },

    /** True when the signature is recorded (now or by an earlier try); false when the request has ended. */
    async recordSignature(requestId: string, sign: SignInput): Promise<boolean> {
      const loaded = await loadForLifecycle(db, requestId);
      const { request, signers } = loaded;
      const signer = signers.find((candidate) => candidate.id === sign.signerId)!;
      if (signer.status === 'signed') return true; // a retry: already recorded
      return unitOfWork(db, async (trx) => {
        const signedAt = new Date();
        const updated = await trx('signers')
          .where({ id: signer.id })
          .whereNotIn('status', ['signed', 'declined'])
          .whereExists(trx('signing_requests').where({ id: requestId, status: 'pending' }).select(trx.raw('1')))
          .update({
            status: 'signed',
            signed_at: signedAt,
            signature: JSON.stringify({ ...sign.signature, fieldValues: sign.fieldValues ?? {} }),
            ip_address: sign.ipAddress ?? null,
            user_agent: sign.userAgent ?? null,
          });
        if (updated === 0) return false;
        await recordAuditStep(trx, requestId, {
          action: 'signed',
          key: `signed:${signer.id}`,
          signerId: signer.id,
          actor: signer.email,
          client: sign,
          data: { signatureType: sign.signature.type },
        });
        await event(trx, loaded, 'signer.signed', `${signer.id}:signed`, {
          documentId: request.documentId,
          signerId: signer.id,
          name: signer.name,
          email: signer.email,
          signedAt: signedAt.toISOString(),
        });
        return true;
      });
    },

    /** An approver's approval; true when recorded (now or by an earlier try), false when the request has ended. */
    recordApproval: (requestId: string, approval: ActInput) =>
      recordPart(requestId, approval, { status: 'approved', from: ['pending', 'notified', 'viewed'], at: 'approved_at', action: 'approved' }),

    /**
     * A viewer's step: its page has shown the documents, written as its view (audit step and signer.viewed
     * event); true once recorded, false when the request has ended.
     */
    recordViewStep: (requestId: string, view: ActInput) =>
      recordPart(requestId, view, { status: 'viewed', from: ['pending', 'notified'], at: 'viewed_at', action: 'viewed' }),

    /** One decline ends the request for everyone. */
    async recordDecline(requestId: string, decline: DeclineInput): Promise<boolean> {
      const loaded = await loadForLifecycle(db, requestId);
      const { request, signers } = loaded;
      const signer = signers.find((candidate) => candidate.id === decline.signerId)!;
      if (signer.status === 'declined' && request.status === 'declined') return true; // a retry
      return unitOfWork(db, async (trx) => {
        const declinedAt = new Date();
        if (!(await endRequest(trx, requestId, 'declined'))) return false;
        await trx('signers')
          .where({ id: signer.id })
          .whereNotIn('status', ['signed', 'declined'])
          .update({
            status: 'declined',
            declined_at: declinedAt,
            decline_reason: decline.reason,
            ip_address: decline.ipAddress ?? null,
            user_agent: decline.userAgent ?? null,
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
        await event(trx, loaded, 'signer.declined', `${signer.id}:declined`, { ...data, name: signer.name, email: signer.email });
        await event(trx, loaded, 'signing_request.declined', `${requestId}:declined`, data);
        return true;
      }).then(countSigningRequestEnd('declined'));
    },

    async recordCancellation(requestId: string, reason: string | null): Promise<boolean> {
      const loaded = await loadForLifecycle(db, requestId);
      const { request, owner } = loaded;
      if (request.status === 'cancelled') return true; // a retry
      return unitOfWork(db, async (trx) => {
        if (!(await endRequest(trx, requestId, 'cancelled', { cancel_reason: reason }))) return false;
        await recordAuditStep(trx, requestId, { action: 'cancelled', key: `cancelled:${requestId}`, actor: owner.email, data: { reason } });
        await event(trx, loaded, 'signing_request.cancelled', `${requestId}:cancelled`, {
          documentId: request.documentId,
          reason,
          cancelledAt: new Date().toISOString(),
        });
        return true;
      }).then(countSigningRequestEnd('cancelled'));
    },

    async expireRequest(requestId: string): Promise<boolean> {
      const loaded = await loadForLifecycle(db, requestId);
      const { request } = loaded;
      if (request.status === 'expired') return true; // a retry
      return unitOfWork(db, async (trx) => {
        if (!(await endRequest(trx, requestId, 'expired'))) return false;
        await recordAuditStep(trx, requestId, { action: 'expired', key: `expired:${requestId}` });
        await event(trx, loaded, 'signing_request.expired', `${requestId}:expired`, { documentId: request.documentId, expiredAt: new Date().toISOString() });
        return true;
      }).then(countSigningRequestEnd('expired'));
    },

    /**
     * Seals each document (once each: a retry seals only what is missing), then marks the request
     * completed with its events, in one transaction.
     */
    async completeRequest(requestId: string) {
      const loaded = await loadForLifecycle(db, requestId);
      const { request, signers, documents } = loaded;
      if (request.status === 'completed') return;
      const sealedBefore = new Set<string>(
        (await db('sealed_documents').where({ signing_request_id: requestId }).select('document_id')).map((row) => row.document_id),
      );
      const toSeal = documents.filter((document) => !sealedBefore.has(document.documentId));
      if (toSeal.length > 0) {
        const steps = await db('audit_trail').where({ signing_request_id: requestId }).orderBy('id');
        const sealCertificate = await loadSealCertificate({ p12Path: config.SEAL_P12_PATH, p12Password: config.SEAL_P12_PASSWORD, dataDir: config.dataDir });
        for (const document of toSeal) {
          const original = await db('document_files').where({ document_id: document.documentId }).first('content');
          const sealed = await sealDocumentOnThread({
            original: original.content,
            signatures: stampsOn(document, loaded),
            certificate: {
              requestId,
              title: request.title,
              document: certificateDocument(document),
              documents: documents.map(certificateDocument),
              events: steps.map((step) => ({ at: step.created_at, type: step.action, actor: step.actor ?? undefined })),
              signers: signers.map((signer) => ({
                name: signer.name,
                email: signer.email,
                recipientType: signer.recipientType,
                approvedAt: signer.approvedAt ?? undefined,
                ipAddress: signer.ipAddress ?? undefined,
                userAgent: signer.userAgent ?? undefined,
                viewedAt: signer.viewedAt ?? undefined,
                signedAt: signer.signedAt ?? undefined,
                verification: signer.verification ? { method: signer.verification.method, verified: signer.verification.verifiedAt !== null } : undefined,
                typedSignature: signer.signature?.type === 'typed' ? signer.signature.value : undefined,
              })),
            },
            sealCertificate,
          });
          await db('sealed_documents')
            .insert({ signing_request_id: requestId, document_id: document.documentId, content: sealed.pdf, sha256: sealed.sha256 })
            .onConflict(['signing_request_id', 'document_id'])
            .ignore();
        }
      }
      const sealedHashes = new Map<string, string>(
        (await db('sealed_documents').where({ signing_request_id: requestId }).select('document_id', 'sha256')).map((row) => [row.document_id, row.sha256]),
      );
      const sealedDocuments = documents.map((document) => ({ ...document, sealedSha256: sealedHashes.get(document.documentId)! }));
      const sha256 = sealedDocuments[0].sealedSha256;
      await unitOfWork(db, async (trx) => {
        const signedAt = new Date();
        if (!(await endRequest(trx, requestId, 'completed', { sealed_sha256: sha256, completed_at: signedAt }))) return false;
        for (const document of sealedDocuments) {
          await trx('signing_request_documents')
            .where({ signing_request_id: requestId, document_id: document.documentId })
            .update({ sealed_sha256: document.sealedSha256 });
        }
        await recordAuditStep(trx, requestId, {
          action: 'completed',
          key: `completed:${requestId}`,
          data: { sealedSha256: sha256, documents: sealedDocuments.map(({ documentId, sealedSha256 }) => ({ documentId, sealedSha256 })) },
        });
        for (const document of sealedDocuments) {
          // One per document; the first keeps the key it had when a request had one document.
          const key = document.position === 1 ? `${requestId}:document.signed` : `${requestId}:${document.documentId}:document.signed`;
          await events.record(
            trx,
            request.accountId,
            'document.signed',
            {
              documentId: document.documentId,
              fileName: document.fileName,
              signedAt: signedAt.toISOString(),
              signatureCount: signers.filter((signer) => signer.recipientType === 'signer').length,
              signingRequestId: requestId,
            },
            key,
          );
        }
        await event(trx, { ...loaded, documents: sealedDocuments }, 'signing_request.completed', `${requestId}:completed`, {
          documentId: request.documentId,
          title: request.title,
          completedAt: signedAt.toISOString(),
          sealedSha256: sha256,
          signers: signers.map((signer) => ({ id: signer.id, email: signer.email, signedAt: signer.signedAt?.toISOString() })),
        });
        return true;
      }).then(countSigningRequestEnd('completed'));
    },

    /**
     * The e-mails that close a request: the sealed PDF to everyone, or word of a decline or cancellation.
     * Owed, so counted in the account's hour but never refused.
     */
    async sendClosingMails(requestId: string) {
      const loaded = await loadForLifecycle(db, requestId);
      const { request, signers, owner, documents } = loaded;
      const brand = await brandOf(request.accountId);
      const send = async (key: string, to: Recipient, rendered: RenderedMail, attachments?: MailMessage['attachments']) => {
        await countOwedMail(db, request.accountId, key);
        await sendMail(key, to, rendered, brand, attachments);
      };
      const everyone = [...signers, { id: 'owner', ...owner }];
      if (request.status === 'completed') {
        const attachments = await sealedAttachments(requestId, documents);
        for (const person of everyone) {
          await send(
            `completed:${requestId}:${person.email}`,
            person,
            completedMail({ recipientName: person.name ?? person.email, title: request.title, brand }),
            attachments,
          );
        }
      } else if (request.status === 'declined') {
        const decliner = signers.find((signer) => signer.status === 'declined');
        // A cc hears only of a completed request.
        for (const person of everyone.filter(
          (candidate) => candidate.id !== decliner?.id && !('recipientType' in candidate && candidate.recipientType === 'cc'),
        )) {
          await send(
            `declined:${requestId}:${person.email}`,
            person,
            declinedMail({
              recipientName: person.name ?? person.email,
              title: request.title,
              decliner: { name: decliner?.name ?? '', email: decliner?.email ?? '' },
              reason: decliner?.declineReason,
              brand,
            }),
          );
        }
      } else if (request.status === 'cancelled') {
        for (const signer of signers.filter((candidate) => candidate.status !== 'pending')) {
          await send(
            `cancelled:${requestId}:${signer.email}`,
            signer,
            cancelledMail({ recipientName: signer.name, title: request.title, sender: owner, reason: request.cancelReason, brand }),
          );
        }
      }
    },
  };
}

export type SigningRequestLifecycle = ReturnType<typeof signingRequestLifecycle>;
