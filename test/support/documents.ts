import { expect } from 'chai';
import type { presentDocument } from '../../src/documents/presenter';
import type { Request } from './http';
import { makePdf } from './pdfs';

/** A document as the API answers it. */
export type UploadedDocument = ReturnType<typeof presentDocument>;

/**
 * Uploads a PDF through the public API (base64 in JSON) and answers the ready document, checking the 201:
 * `pdf` as given, or one made of `pages` (a line of text each; two pages unless told).
 */
export async function uploadDocument(
  request: Request,
  { pages = ['Agreement', 'Page two'], fileName = 'agreement.pdf', pdf }: { pages?: string[]; fileName?: string; pdf?: Buffer } = {},
): Promise<UploadedDocument> {
  const content = pdf ?? (await makePdf(pages));
  const response = await request('POST', '/api/v1/documents', { json: { fileName, fileSize: content.length, content: content.toString('base64') } });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body;
}
