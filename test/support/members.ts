import { expect } from 'chai';
import { setAccountPlan } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import type { Plan } from '../../src/domain/plans';
import type { MemberRole } from '../../src/domain/roles';
import { client } from './http';
import { consoleClient, mailedLink, newEmail, PASSWORD, signedUp, type ConsoleClient } from './consoleClient';
import { sharedSystem } from './system';

/** An account's owner (on this plan), signed up and confirmed in the console, with their id, account and an API key they made. */
export async function ownerOfNewAccount(baseUrl: string, accountName = 'Acme Ltd', plan: Plan = 'free') {
  const { browser, email } = await signedUp(baseUrl, {}, accountName);
  const db = (await sharedSystem()).database.knex;
  const user = await db('users').whereRaw('lower(email) = ?', [email]).first();
  if (plan !== 'free') await setAccountPlan(db, user.account_id, plan);
  const { secret } = await createApiKey(db, user.account_id, 'owner', { createdBy: { id: user.id, email } });
  return { browser, email, id: user.id as string, accountId: user.account_id as string, api: client(baseUrl, secret) };
}

/** Invites a new address with this role from the members page and follows the e-mailed link, as the invitee would. */
export async function invitedMember(baseUrl: string, inviter: ConsoleClient, role: MemberRole) {
  const email = newEmail();
  const invited = await inviter.submit('/app/settings/members', '/app/settings/members/invitations', { email, role });
  expect(invited.status, invited.text).to.equal(303);
  const browser = consoleClient(baseUrl);
  const link = await mailedLink(email, '/app/invitations/');
  const page = await browser.request('GET', link);
  expect(page.status, page.text).to.equal(200);
  const joined = await browser.post(link, { password: PASSWORD });
  expect(joined.status, joined.text).to.equal(303);
  const db = (await sharedSystem()).database.knex;
  const user = await db('users').where({ email }).first();
  return { browser, email, id: user.id as string, link };
}

/** An API key made by this member (as the console's API keys page would, had their role let them). */
export async function keyOf(baseUrl: string, member: { id: string; email: string }, accountId: string) {
  const db = (await sharedSystem()).database.knex;
  const { secret, apiKey } = await createApiKey(db, accountId, `key of ${member.email}`, { createdBy: member });
  return { api: client(baseUrl, secret), keyId: apiKey.id };
}
