import type { Config } from '../config';
import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import type { EventLog } from '../events/service';
import { mailSender, type MailMessage, type MailTransport } from '../mail';
import { countOwedMail, openMailHour } from '../mail/allowance';
import type { MailBrand } from '../domain/brand';
import { cancelledMail, completedMail, declinedMail, invitationMail, reminderMail, type RenderedMail } from '../mail/templates';
import { mailBrandOfAccount } from '../accounts/branding';
import { hasActed, type RecipientType, type RemindOutcome } from '../domain/signingRequests';
import { findSealedFiles } from './download';
import { invitationMailKey, reminderMailKey, remindable } from './reminders';
import {
  findSignersOfAuditSteps,
  loadForLifecycle,
  lockSignersToRemind,
  markFirstMailed,
  markSignerMailed,
  markSignerNotified,
  recordAuditStep,
  type RequestDocument,
  type SigningRequest,
} from './store';
import { insertSignerToken } from './tokenStore';
import { emailLinkToken, hashToken, loadTokenSecret } from './tokens';
import { recordRequestEvent } from './transitions';

export interface NotificationDeps {
  db: Db;
  events: EventLog;
  config: Pick<Config, 'publicUrl' | 'dataDir' | 'MAIL_FROM' | 'SIGNING_TOKEN_SECRET' | 'RATE_LIMIT_MULTIPLIER'>;
  mail: MailTransport;
}

type Recipient = { email: string; name?: string | null };

// The e-mails of a signing request, as its workflow sends them: invitations, reminders and the closing
// e-mails. Each is sent under an idempotency key, so a retried activity sends it once.

/** What every e-mail of a request is made and sent with; made once per worker (the links' secret is read once). */
export function createNotifier(deps: NotificationDeps) {
  const { db, config, mail } = deps;
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
  const sealedAttachments = async (requestId: string, documents: RequestDocument[]): Promise<NonNullable<MailMessage['attachments']>> =>
    (await findSealedFiles(db, requestId, documents)).map(({ fileName, content }) => ({
      filename: fileName,
      contentType: 'application/pdf',
      content: content!,
    }));
  const signingUrl = (signerId: string) => `${config.publicUrl}/sign/${emailLinkToken(tokenSecret, signerId)}`;
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
    insertSignerToken(trx, { tokenHash: hashToken(emailLinkToken(tokenSecret, signerId)), signerId, expiresAt: request.expiresAt });

  return { ...deps, brandOf, sendMail, sealedAttachments, linkMail, issueLink };
}

export type Notifier = ReturnType<typeof createNotifier>;

/** Invites signers whose turn it is. Owed, never refused: the request paid for its first invitations when it was made. */
export async function sendInvitations(notifier: Notifier, requestId: string, signerIds: string[]) {
  const { db, events, brandOf, sendMail, linkMail, issueLink } = notifier;
  const loaded = await loadForLifecycle(db, requestId);
  const { request, signers, owner } = loaded;
  const brand = await brandOf(request.accountId);
  for (const signer of signers.filter((candidate) => signerIds.includes(candidate.id) && !hasActed(candidate))) {
    const key = invitationMailKey(signer.id);
    await unitOfWork(db, async (trx) => {
      await issueLink(trx, request, signer.id);
      const notified = await markSignerNotified(trx, signer.id);
      // The invitation starts the signer's hour without a reminder; a retry does not move it.
      await markFirstMailed(trx, signer.id);
      await recordAuditStep(trx, requestId, { action: 'invitation_sent', key, signerId: signer.id, data: { email: signer.email } });
      await countOwedMail(trx, request.accountId, key);
      if (notified) {
        await recordRequestEvent(events, trx, loaded, 'signer.notified', `${signer.id}:notified`, {
          signerId: signer.id,
          name: signer.name,
          email: signer.email,
          notifiedAt: new Date().toISOString(),
        });
      }
    });
    await sendMail(key, signer, invitationMail(linkMail(request, owner, signer, brand)), brand);
  }
}

/**
 * Reminds those of `signerIds` (whose turn it is) who may have a reminder now: one e-mail with their
 * link an hour (the invitation included), within the account's e-mails this hour, in signing order.
 * Decided in one transaction that locks the account's hour and the signers' rows, so that concurrent
 * rounds (15 reminds at once, or a remind and a scheduled reminder) remind each signer once. A retry
 * of a round reminds again whom it chose before (the same e-mails, sent once) and no one else.
 */
export async function sendReminders(notifier: Notifier, requestId: string, signerIds: string[], round: number): Promise<RemindOutcome> {
  const { db, config, brandOf, sendMail, linkMail, issueLink } = notifier;
  const loaded = await loadForLifecycle(db, requestId);
  const { request, signers, owner, plan } = loaded;
  const keyOf = (signerId: string) => reminderMailKey(signerId, round);
  const outcome = await unitOfWork(db, async (trx): Promise<RemindOutcome> => {
    const hour = await openMailHour(trx, { id: request.accountId, plan }, config.RATE_LIMIT_MULTIPLIER);
    const open = await lockSignersToRemind(trx, requestId, signerIds);
    const chosenBefore = new Set(
      await findSignersOfAuditSteps(
        trx,
        open.map((signer) => keyOf(signer.id)),
      ),
    );
    const { ready, nextAt } = remindable(
      open.filter((signer) => !chosenBefore.has(signer.id)),
      hour.now,
    );
    const chosen = ready.slice(0, hour.remaining);
    await hour.take(chosen.map((signer) => keyOf(signer.id)));
    for (const { id } of chosen) {
      const { email } = signers.find((signer) => signer.id === id)!;
      await markSignerMailed(trx, id, hour.now);
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
}

/**
 * The e-mails that close a request: the sealed PDF to everyone, or word of a decline or cancellation.
 * Owed, so counted in the account's hour but never refused.
 */
export async function sendClosingMails(notifier: Notifier, requestId: string) {
  const { db, brandOf, sendMail, sealedAttachments } = notifier;
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
    for (const person of everyone.filter((candidate) => candidate.id !== decliner?.id && !('recipientType' in candidate && candidate.recipientType === 'cc'))) {
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
}
