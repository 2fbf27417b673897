import crypto from 'node:crypto';
import { z } from '../api/validation';

// The secrets a person is given to prove who they are: a console session's cookie, and the links of an
// address's confirmation, a password reset and an invitation. 32 random bytes as base64url (43
// characters); only their SHA-256 is stored, and found by it, so a leaked table opens nothing.

export const newLinkToken = () => crypto.randomBytes(32).toString('base64url');

export const hashLinkToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/** A link's :token, as newLinkToken makes them; anything else is no link of ours. */
export const LinkTokenParams = z.object({ token: z.string().regex(/^[\w-]{43}$/) });
