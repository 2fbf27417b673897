import { progressFromDatabase, type SigningRequestProgress } from '../domain/signingRequests';
import { filledOf } from '../documents/form';
import type { SignerField } from '../documents/fields';
import type { SigningRequestWithSigners } from './store';

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** Exactly the fields of a signing request, and of its signers, that leave the service. */
export function presentSigningRequest(found: SigningRequestWithSigners & { progress?: SigningRequestProgress }) {
  const { request, signers, documents } = found;
  return {
    id: request.id,
    documentId: request.documentId,
    documents: documents.map(({ documentId, fileName, pageCount, originalSha256, sealedSha256 }) => ({
      documentId,
      fileName,
      pageCount,
      originalSha256,
      sealedSha256,
    })),
    title: request.title,
    message: request.message,
    status: request.status,
    signingOrder: request.signingOrder,
    expiresAt: request.expiresAt.toISOString(),
    reminderEveryDays: request.reminderEveryDays,
    originalSha256: request.originalSha256,
    sealedSha256: request.sealedSha256,
    signers: signers.map((signer) => ({
      id: signer.id,
      name: signer.name,
      email: signer.email,
      order: signer.order,
      recipientType: signer.recipientType,
      routingOrder: signer.routingOrder,
      status: signer.status,
      fields: signer.fields && signer.signature ? withFilledValues(signer.fields, signer.signature) : signer.fields,
      notifiedAt: iso(signer.notifiedAt),
      viewedAt: iso(signer.viewedAt),
      signedAt: iso(signer.signedAt),
      approvedAt: iso(signer.approvedAt),
      declinedAt: iso(signer.declinedAt),
      declineReason: signer.declineReason,
      verification: signer.verification && {
        method: signer.verification.method,
        verifiedAt: iso(signer.verification.verifiedAt),
        // A lock that has run out is no lock.
        lockedUntil: signer.verification.lockedUntil && signer.verification.lockedUntil > new Date() ? iso(signer.verification.lockedUntil) : null,
      },
    })),
    progress: found.progress ?? progressFromDatabase(found),
    createdAt: request.createdAt.toISOString(),
    updatedAt: request.updatedAt.toISOString(),
    completedAt: iso(request.completedAt),
    redirectUrl: request.redirectUrl,
    bulkSend: request.bulkSend,
    sentBy: request.sentBy,
  };
}

/** A signed signer's fields, each form field with what it holds as sealed (`filled`): its value typed, and whether its condition hid it. */
function withFilledValues(fields: SignerField[], signature: NonNullable<SigningRequestWithSigners['signers'][number]['signature']>) {
  return fields.map((field, index) => {
    const filled = filledOf(field, index, signature);
    return filled ? { ...field, filled } : field;
  });
}
