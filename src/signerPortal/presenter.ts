import { hasActed } from '../domain/signingRequests';
import type { SigningContext } from '../signingRequests/links';

/** Exactly what the signer's page is told of the request, its sender and the signer. */
export function presentSignerView({ signer, request, sender, documents, waitingOnOthers }: SigningContext) {
  return {
    request: {
      id: request.id,
      title: request.title,
      message: request.message,
      status: request.status,
      signingOrder: request.signingOrder,
      expiresAt: request.expiresAt.toISOString(),
      sender,
      redirectUrl: request.redirectUrl,
    },
    signer: { id: signer.id, name: signer.name, email: signer.email, recipientType: signer.recipientType, status: signer.status, fields: signer.fields },
    // The first document as before, and every document in the order the signer reads them.
    document: { fileName: documents[0].fileName, pageCount: documents[0].pageCount },
    documents: documents.map((document) => ({ id: document.documentId, fileName: document.fileName, pageCount: document.pageCount })),
    yourTurn: request.status === 'pending' && !waitingOnOthers && signer.recipientType !== 'cc' && !hasActed(signer),
  };
}
