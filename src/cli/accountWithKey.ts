import type { Db } from '../db';
import { parseInput, z } from '../api/validation';
import { createApiKey } from '../apiKeys/service';
import type { Plan } from '../domain/plans';
import { createAccount } from '../accounts/service';

// Composes two resources, an account and its first API key, so that neither service imports the other.

const OperatorAccountSchema = z.object({ email: z.email().max(320) });

/** The CLI's `account create`: an account whose address the operator vouches for, and its first API key. */
export async function createAccountWithKey(db: Db, input: { email: string; plan: Plan; name?: string }) {
  const { email } = parseInput(OperatorAccountSchema, { email: input.email.trim() });
  return db.transaction(async (trx) => {
    const account = await createAccount(trx, { ...input, email });
    const { secret } = await createApiKey(trx, account.id);
    return { account, apiKey: secret };
  });
}
