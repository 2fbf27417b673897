import { expect } from 'chai';
import type { Request } from './http';
import { makePdf } from './pdfs';

/** A ready document of this PDF (two A4 pages unless given), through the public API. */
export async function uploadDocument(request: Request, pdf?: Buffer): Promise<string> {
  const content = pdf ?? (await makePdf(['Lease agreement', 'Signatures']));
  const response = await request('POST', '/api/v1/documents', {
    json: { fileName: 'lease.pdf', fileSize: content.length, content: content.toString('base64') },
  });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.id;
}

/** A template field of `role` on page 1, 150 × 40 points at (50, 100) unless `place` says otherwise. */
export const templateField = (role: string, type: string, place: Record<string, unknown> = {}) => ({
  role,
  type,
  page: 1,
  x: 50,
  y: 100,
  width: 150,
  height: 40,
  ...place,
});
