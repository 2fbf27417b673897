import { findAccountByEmail, getAccount, type Account } from '../accounts/service';
import type { Db } from '../db';
import { AppError } from '../errors';

// The operator names an account by its id (acct_…) or by its owner's e-mail, which is all a newcomer
// who lost the key printed by `account create` still knows.

const isEmail = (text: string) => text.includes('@');

const unlessNotFound = (error: unknown) => {
  if (error instanceof AppError && error.status === 404) return undefined;
  throw error;
};

/** The account named by `idOrEmail`; a 404 that says how to find it when there is none. */
export async function findAccount(db: Db, idOrEmail: string): Promise<Account> {
  const account = isEmail(idOrEmail) ? await findAccountByEmail(db, idOrEmail) : await getAccount(db, idOrEmail).catch(unlessNotFound);
  if (!account)
    throw new AppError(404, 'not_found', `No account has the ${isEmail(idOrEmail) ? 'e-mail' : 'id'} ${idOrEmail}: \`npx signet account list\` lists them.`);
  return account;
}

/** An account as the CLI prints it. */
export const presentAccount = ({ id, email, name, plan, emailVerified, createdAt }: Account) => ({
  accountId: id,
  email,
  name,
  plan,
  emailVerified,
  createdAt,
});
