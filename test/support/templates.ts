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
