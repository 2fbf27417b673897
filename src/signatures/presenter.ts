import type { SigningRequestRecord } from './service';

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** Exactly the fields of a signing request, and of its signers, that leave the service. */
export function presentSigningRequest({ request, signers }: SigningRequestRecord) {
  return {
    id: request.id,
    documentId: request.document_id,
    title: request.title,
    message: request.message,
    status: request.status,
    signingOrder: request.signing_order,
    expiresAt: request.expires_at.toISOString(),
    reminderEveryDays: request.reminder_every_days,
    originalSha256: request.original_sha256,
    sealedSha256: request.sealed_sha256,
    signers: signers.map((signer) => ({
      id: signer.id,
      name: signer.name,
      email: signer.email,
      order: signer.order,
      status: signer.status,
      fields: signer.fields,
      notifiedAt: iso(signer.notified_at),
      viewedAt: iso(signer.viewed_at),
      signedAt: iso(signer.signed_at),
      declinedAt: iso(signer.declined_at),
      declineReason: signer.decline_reason,
    })),
    createdAt: request.created_at.toISOString(),
    updatedAt: request.updated_at.toISOString(),
    completedAt: iso(request.completed_at),
  };
}
