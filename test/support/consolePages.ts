import { expect } from 'chai';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { setAccountPlan } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import type { Plan } from '../../src/domain/plans';
import { confirmEmail, useChromium, watchPage, type WatchOptions } from './browser';
import { client, type Request } from './http';
import { sharedSystem } from './system';

/**
 * A console suite in Chromium (call it in a `describe`): the shared system's URL, and a page per test in a context of
 * its own, closed after the test, which fails on any console error, page error or off-site request but `expectedError`.
 */
export function useConsolePages(expectedError?: WatchOptions['expectedError']) {
  const browser = useChromium();
  let context: BrowserContext | undefined;
  let problems: string[] = [];
  const suite = {
    baseUrl: '',

    async openPage(options: BrowserContextOptions, url: string): Promise<Page> {
      context = await browser().newContext(options);
      problems = [];
      const page = watchPage(await context.newPage(), suite.baseUrl, problems, { expectedError });
      await page.goto(url);
      return page;
    },

    /** Signs up in a page on /app/signup, confirms the address, sets the plan if asked; answers a REST client with a key of the new account. */
    async signUp(page: Page, name: string, plan?: Plan): Promise<Request> {
      const email = `console-${Math.random().toString(36).slice(2)}@example.com`;
      await page.getByLabel('Account name').fill(name);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('a long enough password');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByRole('heading', { name }).waitFor();
      await confirmEmail(page, suite.baseUrl, email);
      const db = (await sharedSystem()).database.knex;
      const { account_id: accountId } = await db('users').where({ email }).first('account_id');
      if (plan) await setAccountPlan(db, accountId, plan);
      return client(suite.baseUrl, (await createApiKey(db, accountId, 'browser test')).secret);
    },
  };
  before(async () => {
    suite.baseUrl = (await sharedSystem()).url!;
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
    expect(problems, 'console errors and CSP violations').to.deep.equal([]);
  });
  return suite;
}
