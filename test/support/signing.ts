import { expect } from 'chai';
import type { Request } from './http';
import { uploadDocument } from './documents';

/** A ready document and a signing request on it, through the public API. */
export async function createSigningRequest(request: Request, body: Record<string, unknown> = {}) {
  const document = await uploadDocument(request);
  const created = await request('POST', '/api/v1/signatures', {
    json: {
      document_id: document.id,
      title: 'Services agreement',
      message: 'Please sign by Friday.',
      signers: [
        { name: 'Ada Lovelace', email: 'ada@example.com' },
        { name: 'Alan Turing', email: 'alan@example.com' },
      ],
      ...body,
    },
  });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return { document, signingRequest: created.body };
}

/** A signer's signing link (its URL), made through the API as a sender would. */
export async function signingLinkOf(request: Request, requestId: string, signerId: string): Promise<string> {
  const link = await request('POST', `/api/v1/signatures/${requestId}/signers/${signerId}/link`);
  expect(link.status, JSON.stringify(link.body)).to.equal(200);
  return link.body.url as string;
}

/** Polls until the check passes (bounded): the workflow works asynchronously. */
export async function eventually<T>(check: () => Promise<T>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
}

/** The request as GET /signatures/{id} shows it once it has completed (its workflow sealed it), within a minute. */
export const completedRequest = (request: Request, requestId: string) =>
  eventually(async () => {
    const response = await request('GET', `/api/v1/signatures/${requestId}`);
    expect(response.body.status).to.equal('completed');
    return response.body;
  }, 60_000);

export const tokenOf = (url: string) => new URL(url).pathname.split('/').pop()!;

// A tiny valid PNG (1×1, black) as a data URL, for drawn signatures (its IDAT CRC was once wrong, which
// pdf-lib never checked: drawn images are now read in full, CRCs included).
export const drawnSignature = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==';
