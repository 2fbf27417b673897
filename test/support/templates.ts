import { uploadDocument } from './documents';
import type { Request } from './http';

/** The id of a ready document of this PDF (two pages of a lease unless given), through the public API. */
export async function uploadLease(request: Request, pdf?: Buffer): Promise<string> {
  return (await uploadDocument(request, { fileName: 'lease.pdf', pages: ['Lease agreement', 'Signatures'], pdf })).id;
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

/** A bulk send's template: "Renewal", one tenant who signs, and the Rent a row prefills. Answers its id. */
export async function renewalTemplate(request: Request): Promise<string> {
  const created = await request('POST', '/api/v1/templates', {
    json: {
      name: 'Renewal',
      documentId: await uploadLease(request),
      roles: [{ name: 'tenant' }],
      fields: [templateField('tenant', 'signature'), templateField('tenant', 'number', { label: 'Rent', y: 200 })],
    },
  });
  if (created.status !== 201) throw new Error(`the template was refused: ${JSON.stringify(created.body)}`);
  return created.body.id as string;
}
