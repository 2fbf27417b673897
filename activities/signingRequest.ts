import type { Config } from '../src/config';
import type { Db } from '../src/db';
import { recordEvent, type EventType } from '../src/events/service';
import { activityEventDispatcher } from './events';
import { mailSender, type MailMessage, type MailTransport } from '../src/mail';
import { cancelledMail, completedMail, declinedMail, invitationMail, reminderMail, type RenderedMail } from '../src/mail/templates';
import { sealDocument } from '../src/pdf/seal';
import { loadSealCertificate } from '../src/pdf/sealCertificate';
import { emailLinkToken, hashToken, loadTokenSecret } from '../src/signing/tokens';
import type { ClientInfo, DeclineInput, SignInput } from '../workflows/definitions';

export interface SigningActivityDeps {
  db: Db;
  config: Pick<Config, 'publicUrl' | 'dataDir' | 'MAIL_FROM' | 'SIGNING_TOKEN_SECRET' | 'SEAL_P12_PATH' | 'SEAL_P12_PASSWORD' | 'WEBHOOK_RETRY_SCALE'>;
  mail: MailTransport;
}

// Every activity is safe to repeat: status changes are conditional, events and audit steps carry an
// idempotency key, e-mails carry one too, and sealing happens once per request.
export function createSigningActivities({ db, config, mail }: SigningActivityDeps) {
  const tokenSecret = loadTokenSecret(config.SIGNING_TOKEN_SECRET, config.dataDir);
  const sender = mailSender(config);

  const loadRequest = async (requestId: string) => {
    const request = await db('signing_requests as r')
      .join('accounts as a', 'a.id', 'r.account_id')
      .join('documents as d', 'd.id', 'r.document_id')
      .where('r.id', requestId)
      .first('r.*', 'a.email as account_email', 'a.name as account_name', 'd.file_name');
    if (!request) throw new Error(`signing request ${requestId} not found`);
    const signers = await db('signers').where({ signing_request_id: requestId }).orderBy('order');
    return { request, signers };
  };

  const audit = (trx: Db, requestId: string, step: { action: string; key: string; signerId?: string; actor?: string; client?: ClientInfo; data?: object }) =>
    trx('audit_trail')
      .insert({
        signing_request_id: requestId,
        signer_id: step.signerId ?? null,
        action: step.action,
        actor: step.actor ?? 'signet',
        ip_address: step.client?.ipAddress ?? null,
        user_agent: step.client?.userAgent ?? null,
        data: step.data ? JSON.stringify(step.data) : null,
        idempotency_key: step.key,
      })
      .onConflict('idempotency_key')
      .ignore();

  // Recorded with the change it reports; its delivery starts once that transaction commits.
  const event = async (trx: Db, accountId: string, type: EventType, data: Record<string, unknown>, key: string) => {
    const recorded = await recordEvent(trx, accountId, type, data, key);
    activityEventDispatcher(db, config.WEBHOOK_RETRY_SCALE).afterCommit(trx, [recorded.id]);
    return recorded;
  };

  const send = (key: string, to: { email: string; name?: string | null }, rendered: RenderedMail, attachments?: MailMessage['attachments']) =>
    mail.send({ idempotencyKey: key, to: to.email, toName: to.name ?? undefined, ...sender, ...rendered, attachments });

  const owner = (request: Record<string, any>) => ({ email: request.account_email as string, name: request.account_name as string | null });
  const signingUrl = (signerId: string) => `${config.publicUrl}/sign/${emailLinkToken(tokenSecret, signerId)}`;

  async function mailSigningLinks(requestId: string, signerIds: string[], kind: 'invitation' | 'reminder', round = 0) {
    const { request, signers } = await loadRequest(requestId);
    const chosen = signers.filter((signer) => signerIds.includes(signer.id) && !['signed', 'declined'].includes(signer.status));
    for (const signer of chosen) {
      await db.transaction(async (trx) => {
        await trx('signer_tokens')
          .insert({ token_hash: hashToken(emailLinkToken(tokenSecret, signer.id)), signer_id: signer.id, expires_at: request.expires_at })
          .onConflict('token_hash')
          .ignore();
        const notified = await trx('signers').where({ id: signer.id, status: 'pending' }).update({ status: 'notified', notified_at: trx.fn.now() });
        await audit(trx, requestId, { action: `${kind}_sent`, key: `${kind}:${signer.id}:${round}`, signerId: signer.id, data: { email: signer.email } });
        if (notified > 0) {
          await event(trx, request.account_id, 'signer.notified', { signingRequestId: requestId, signerId: signer.id, name: signer.name, email: signer.email, notifiedAt: new Date().toISOString() }, `${signer.id}:notified`);
        }
      });
      const input = { signerName: signer.name, sender: owner(request), title: request.title, message: request.message, signingUrl: signingUrl(signer.id), expiresAt: request.expires_at };
      await send(`${kind}:${signer.id}:${round}`, signer, kind === 'invitation' ? invitationMail(input) : reminderMail(input));
    }
    return chosen.map((signer) => signer.id);
  }

  return {
    async sendInvitations(requestId: string, signerIds: string[]) {
      await mailSigningLinks(requestId, signerIds, 'invitation');
    },

    async sendReminders(requestId: string, signerIds: string[], round: number) {
      return mailSigningLinks(requestId, signerIds, 'reminder', round);
    },

    async announceRequest(requestId: string) {
      const { request, signers } = await loadRequest(requestId);
      await db.transaction((trx) =>
        event(trx, request.account_id, 'signing_request.created', {
          signingRequestId: request.id,
          documentId: request.document_id,
          title: request.title,
          signingOrder: request.signing_order,
          signers: signers.map((signer) => ({ id: signer.id, name: signer.name, email: signer.email, order: signer.order })),
          createdAt: request.created_at.toISOString(),
        }, `${requestId}:created`),
      );
    },

    async recordView(requestId: string, view: { signerId: string } & ClientInfo) {
      const { request, signers } = await loadRequest(requestId);
      const signer = signers.find((candidate) => candidate.id === view.signerId);
      if (!signer) return;
      await db.transaction(async (trx) => {
        await trx('signers').where({ id: signer.id }).whereIn('status', ['pending', 'notified']).update({ status: 'viewed', viewed_at: trx.fn.now() });
        await audit(trx, requestId, { action: 'viewed', key: `viewed:${signer.id}`, signerId: signer.id, actor: signer.email, client: view });
        await event(trx, request.account_id, 'signer.viewed', { signingRequestId: requestId, signerId: signer.id, email: signer.email, viewedAt: new Date().toISOString() }, `${signer.id}:viewed`);
      });
    },

    async recordSignature(requestId: string, sign: SignInput) {
      const { request, signers } = await loadRequest(requestId);
      const signer = signers.find((candidate) => candidate.id === sign.signerId)!;
      await db.transaction(async (trx) => {
        const signedAt = new Date();
        const updated = await trx('signers')
          .where({ id: signer.id })
          .whereNotIn('status', ['signed', 'declined'])
          .update({ status: 'signed', signed_at: signedAt, signature: JSON.stringify({ ...sign.signature, fieldValues: sign.fieldValues ?? {} }), ip_address: sign.ipAddress ?? null, user_agent: sign.userAgent ?? null });
        if (updated === 0) return; // a retry: the signature is already recorded
        await audit(trx, requestId, { action: 'signed', key: `signed:${signer.id}`, signerId: signer.id, actor: signer.email, client: sign, data: { signatureType: sign.signature.type } });
        await event(trx, request.account_id, 'signer.signed', {
          signingRequestId: requestId,
          documentId: request.document_id,
          signerId: signer.id,
          name: signer.name,
          email: signer.email,
          signedAt: signedAt.toISOString(),
        }, `${signer.id}:signed`);
      });
    },

    async recordDecline(requestId: string, decline: DeclineInput) {
      const { request, signers } = await loadRequest(requestId);
      const signer = signers.find((candidate) => candidate.id === decline.signerId)!;
      await db.transaction(async (trx) => {
        const declinedAt = new Date();
        await trx('signers')
          .where({ id: signer.id })
          .whereNotIn('status', ['signed', 'declined'])
          .update({ status: 'declined', declined_at: declinedAt, decline_reason: decline.reason, ip_address: decline.ipAddress ?? null, user_agent: decline.userAgent ?? null });
        await trx('signing_requests').where({ id: requestId, status: 'pending' }).update({ status: 'declined', completed_at: declinedAt, updated_at: declinedAt });
        await audit(trx, requestId, { action: 'declined', key: `declined:${signer.id}`, signerId: signer.id, actor: signer.email, client: decline, data: { reason: decline.reason } });
        await event(trx, request.account_id, 'signer.declined', {
          signingRequestId: requestId,
          documentId: request.document_id,
          signerId: signer.id,
          name: signer.name,
          email: signer.email,
          reason: decline.reason,
          declinedAt: declinedAt.toISOString(),
        }, `${signer.id}:declined`);
        // One decline ends the request for everyone: the request's own event, as for cancelled and expired.
        await event(trx, request.account_id, 'signing_request.declined', {
          signingRequestId: requestId,
          documentId: request.document_id,
          signerId: signer.id,
          reason: decline.reason,
          declinedAt: declinedAt.toISOString(),
        }, `${requestId}:declined`);
      });
    },

    async recordCancellation(requestId: string, reason: string | null) {
      const { request } = await loadRequest(requestId);
      await db.transaction(async (trx) => {
        await trx('signing_requests').where({ id: requestId, status: 'pending' }).update({ status: 'cancelled', cancel_reason: reason, completed_at: trx.fn.now(), updated_at: trx.fn.now() });
        await audit(trx, requestId, { action: 'cancelled', key: `cancelled:${requestId}`, actor: request.account_email, data: { reason } });
        await event(trx, request.account_id, 'signing_request.cancelled', { signingRequestId: requestId, documentId: request.document_id, reason, cancelledAt: new Date().toISOString() }, `${requestId}:cancelled`);
      });
    },

    async expireRequest(requestId: string) {
      const { request } = await loadRequest(requestId);
      await db.transaction(async (trx) => {
        await trx('signing_requests').where({ id: requestId, status: 'pending' }).update({ status: 'expired', completed_at: trx.fn.now(), updated_at: trx.fn.now() });
        await audit(trx, requestId, { action: 'expired', key: `expired:${requestId}` });
        await event(trx, request.account_id, 'signing_request.expired', { signingRequestId: requestId, documentId: request.document_id, expiredAt: new Date().toISOString() }, `${requestId}:expired`);
      });
    },

    /** Seals the PDF (once), then marks the request completed with its two events, in one transaction. */
    async completeRequest(requestId: string) {
      const { request, signers } = await loadRequest(requestId);
      if (!(await db('sealed_documents').where({ signing_request_id: requestId }).first('sha256'))) {
        const original = await db('document_files').where({ document_id: request.document_id }).first('content');
        const steps = await db('audit_trail').where({ signing_request_id: requestId }).orderBy('id');
        const sealed = await sealDocument({
          original: original.content,
          signatures: signers.map((signer) => ({
            signerName: signer.name,
            signerEmail: signer.email,
            signedAt: signer.signed_at,
            signature: signer.signature.type === 'drawn' ? { type: 'drawn', pngDataUrl: signer.signature.value } : { type: 'typed', value: signer.signature.value },
            // A text field's value is what the signer entered for it, keyed by the field's position in the list.
            fields: signer.fields?.map((field: object, index: number) => ({ ...field, value: signer.signature.fieldValues?.[String(index)] })),
          })),
          certificate: {
            requestId,
            title: request.title,
            documentName: request.file_name,
            events: steps.map((step) => ({ at: step.created_at, type: step.action, actor: step.actor ?? undefined })),
            signers: signers.map((signer) => ({
              name: signer.name,
              email: signer.email,
              ipAddress: signer.ip_address ?? undefined,
              userAgent: signer.user_agent ?? undefined,
              viewedAt: signer.viewed_at ?? undefined,
              signedAt: signer.signed_at ?? undefined,
            })),
          },
          sealCertificate: await loadSealCertificate({ p12Path: config.SEAL_P12_PATH, p12Password: config.SEAL_P12_PASSWORD, dataDir: config.dataDir }),
        });
        await db('sealed_documents').insert({ signing_request_id: requestId, content: sealed.pdf, sha256: sealed.sha256 }).onConflict('signing_request_id').ignore();
      }
      const { sha256 } = await db('sealed_documents').where({ signing_request_id: requestId }).first('sha256');
      await db.transaction(async (trx) => {
        const signedAt = new Date();
        await trx('signing_requests').where({ id: requestId, status: 'pending' }).update({ status: 'completed', sealed_sha256: sha256, completed_at: signedAt, updated_at: signedAt });
        await audit(trx, requestId, { action: 'completed', key: `completed:${requestId}`, data: { sealedSha256: sha256 } });
        await event(trx, request.account_id, 'document.signed', {
          documentId: request.document_id,
          fileName: request.file_name,
          signedAt: signedAt.toISOString(),
          signatureCount: signers.length,
        }, `${requestId}:document.signed`);
        await event(trx, request.account_id, 'signing_request.completed', {
          signingRequestId: requestId,
          documentId: request.document_id,
          title: request.title,
          completedAt: signedAt.toISOString(),
          sealedSha256: sha256,
          signers: signers.map((signer) => ({ id: signer.id, email: signer.email, signedAt: signer.signed_at?.toISOString() })),
        }, `${requestId}:completed`);
      });
    },

    /** The e-mails that close a request: the sealed PDF to everyone, or word of a decline or cancellation. */
    async sendClosingMails(requestId: string) {
      const { request, signers } = await loadRequest(requestId);
      const everyone = [...signers, { id: 'owner', ...owner(request) }];
      if (request.status === 'completed') {
        const { content } = await db('sealed_documents').where({ signing_request_id: requestId }).first('content');
        const attachment = { filename: request.file_name.replace(/\.pdf$/i, '') + ' (signed).pdf', contentType: 'application/pdf', content };
        for (const person of everyone) {
          await send(`completed:${requestId}:${person.email}`, person, completedMail({ recipientName: person.name ?? person.email, title: request.title }), [attachment]);
        }
      } else if (request.status === 'declined') {
        const decliner = signers.find((signer) => signer.status === 'declined');
        for (const person of everyone.filter((candidate) => candidate.id !== decliner?.id)) {
          await send(`declined:${requestId}:${person.email}`, person, declinedMail({ recipientName: person.name ?? person.email, title: request.title, decliner: { name: decliner?.name ?? '', email: decliner?.email ?? '' }, reason: decliner?.decline_reason }));
        }
      } else if (request.status === 'cancelled') {
        for (const signer of signers.filter((candidate) => candidate.status !== 'pending')) {
          await send(`cancelled:${requestId}:${signer.email}`, signer, cancelledMail({ recipientName: signer.name, title: request.title, sender: owner(request), reason: request.cancel_reason }));
        }
      }
    },
  };
}

export type SigningActivities = ReturnType<typeof createSigningActivities>;
