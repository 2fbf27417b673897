import type { Db } from '../db';
import { actorLabel } from '../domain/actors';
import { unitOfWork } from '../db/unitOfWork';
import { findFileContent } from '../documents/store';
import { formAnswers } from '../documents/form';
import { storedUploadOf } from '../fields/uploads';
import { findUploadContents } from './uploads';
import type { EventLog } from '../events/service';
import { countSigningRequestEnd } from '../metrics';
import type { SignatureMark, SignatureStamp } from '../pdf/stamp';
import type { Sealer, SealInput } from './sealing';
import {
  endSigningRequest,
  findAuditSteps,
  findSealedHashes,
  insertSealedDocument,
  loadForLifecycle,
  recordAuditStep,
  recordSealedHash,
  type RequestDocument,
} from './store';
import { recordRequestEvent, type Loaded } from './transitions';

/**
 * The last transition: seals each document (once each: a retry seals only what is missing), then marks
 * the request completed with its events, in one transaction.
 */
export async function completeRequest({ db, events, sealer }: { db: Db; events: EventLog; sealer: Sealer }, requestId: string) {
  const loaded = await loadForLifecycle(db, requestId);
  const { request, signers, documents } = loaded;
  if (request.status === 'completed') return;
  const sealedBefore = await findSealedHashes(db, requestId);
  const toSeal = documents.filter((document) => !sealedBefore.has(document.documentId));
  if (toSeal.length > 0) {
    const steps = await findAuditSteps(db, requestId);
    for (const document of toSeal) {
      const original = (await findFileContent(db, document.documentId))!;
      const input = sealInput(loaded, document, original, steps);
      const uploaded = input.signatures.flatMap((stamp) =>
        (stamp.fields ?? []).flatMap((field) => storedUploadOf(field.hidden ? null : field.value)?.id ?? []),
      );
      const sealed = await sealer.seal({ ...input, files: await findUploadContents(db, requestId, uploaded) });
      await insertSealedDocument(db, requestId, document.documentId, sealed);
    }
  }
  const sealedHashes = await findSealedHashes(db, requestId);
  const sealedDocuments = documents.map((document) => ({ ...document, sealedSha256: sealedHashes.get(document.documentId)! }));
  const sha256 = sealedDocuments[0].sealedSha256;
  await unitOfWork(db, async (trx) => {
    const signedAt = new Date();
    if (!(await endSigningRequest(trx, requestId, 'completed', { sealed_sha256: sha256, completed_at: signedAt }))) return false;
    for (const document of sealedDocuments) await recordSealedHash(trx, requestId, document.documentId, document.sealedSha256);
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
    await recordRequestEvent(events, trx, { ...loaded, documents: sealedDocuments }, 'signing_request.completed', `${requestId}:completed`, {
      documentId: request.documentId,
      title: request.title,
      completedAt: signedAt.toISOString(),
      sealedSha256: sha256,
      signers: signers.map((signer) => ({
        id: signer.id,
        email: signer.email,
        signedAt: signer.signedAt?.toISOString(),
        fields: formAnswers(signer.fields, signer.signature ?? {}),
      })),
    });
    return true;
  }).then(countSigningRequestEnd('completed'));
}

const certificateDocument = (document: RequestDocument) => ({
  name: document.fileName,
  sha256: document.originalSha256,
  pageCount: document.pageCount ?? undefined,
});

/** What the seal of one document shows: its signers' marks, and the certificate of completion of the whole request. */
function sealInput(loaded: Loaded, document: RequestDocument, original: Buffer, steps: { at: Date; type: string; actor?: string }[]): SealInput {
  const { request, signers, documents } = loaded;
  return {
    original,
    signatures: stampsOn(document, loaded),
    certificate: {
      requestId: request.id,
      title: request.title,
      sentBy: request.sentBy ? actorLabel(request.sentBy, loaded.owner.email) : undefined,
      document: certificateDocument(document),
      documents: documents.map(certificateDocument),
      events: steps,
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
      uploads: signers.flatMap((signer) =>
        (signer.fields ?? []).flatMap((field, index) => {
          const upload = field.type === 'image' || field.type === 'attachment' ? storedUploadOf(signer.signature?.fieldValues?.[String(index)]) : undefined;
          if (!upload || signer.signature?.hiddenFields?.includes(index)) return [];
          return [
            {
              signer: signer.email,
              field: field.label ?? null,
              kind: field.type as 'image' | 'attachment',
              fileName: upload.fileName,
              size: upload.size,
              sha256: upload.sha256,
            },
          ];
        }),
      ),
    },
  };
}

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
      ?.map((field, index) => ({
        ...field,
        value: field.value ?? signature.fieldValues?.[String(index)],
        hidden: signature.hiddenFields?.includes(index) ?? false,
      }))
      .filter((field) => (field.documentId ?? firstDocumentId) === document.documentId);
    if (signer.fields?.length && !fields?.length) return [];
    const mark: SignatureMark = signature.type === 'drawn' ? { type: 'drawn', pngDataUrl: signature.value } : { type: 'typed', value: signature.value };
    return [{ signerName: signer.name, signerEmail: signer.email, signedAt: signer.signedAt!, signature: mark, fields }];
  });
}
