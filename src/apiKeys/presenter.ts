import { scopesOf } from '../domain/scopes';
import type { ApiKey } from './service';

/** What the API shows of a key: never its hash, and its secret only once (in the answer that made it). */
export const presentApiKey = (key: ApiKey) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  scopes: scopesOf(key.scopes),
  createdAt: key.createdAt.toISOString(),
  expiresAt: key.expiresAt?.toISOString() ?? null,
  lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  revokedAt: key.revokedAt?.toISOString() ?? null,
  createdBy: key.createdBy && { memberId: key.createdBy.id, email: key.createdBy.email },
});
