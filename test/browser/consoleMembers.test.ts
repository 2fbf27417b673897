import { expect } from 'chai';
import { expectAccessible } from '../support/axe';
import { consoleScreenshots, desktop, expectNoSideways, phone, shot } from '../support/browser';
import { useConsolePages } from '../support/consolePages';
import { mailedLink } from '../support/consoleClient';

// The account's people in real headless Chromium: the owner invites a sender, who follows the e-mailed link,
// chooses a password and lands in the account with what a sender may open; every page checked with axe.

describe('the console’s members (headless Chromium)', function () {
  this.timeout(180_000);
  const suite = useConsolePages();
  const { openPage } = suite;

  for (const [device, options] of [
    ['a desktop', desktop],
    ['a phone', phone],
  ] as const) {
    it(`on ${device}: an invitation sent, accepted through its link, and the sender sees what a sender may`, async () => {
      const page = await openPage(options, `${suite.baseUrl}/app/signup`);
      await suite.signUp(page, 'Legal team');
      await page.goto(`${suite.baseUrl}/app/settings/members`);
      await page.getByRole('heading', { name: 'Members', exact: true }).waitFor();
      await expectAccessible(page, 'the members page of the owner');
      await expectNoSideways(page);

      const email = `invitee-${Math.random().toString(36).slice(2)}@example.com`;
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Role', { exact: true }).selectOption('sender');
      await page.getByRole('button', { name: 'Send the invitation' }).click();
      await page.getByRole('status').getByText('Invitation sent.').waitFor();
      await page.getByRole('table', { name: 'Pending invitations' }).getByText(email).waitFor();
      await expectAccessible(page, 'the members page with an invitation');
      if (device === 'a desktop') await shot(page, consoleScreenshots, 'members');

      await page.getByRole('button', { name: 'Log out' }).click();
      await page.goto(`${suite.baseUrl}${await mailedLink(email, '/app/invitations/')}`);
      await page.getByRole('heading', { name: 'Join Legal team' }).waitFor();
      expect(await page.getByText(`invited ${email} to join as a sender`).count()).to.equal(1);
      await expectAccessible(page, 'the invitation’s page');
      await expectNoSideways(page);
      await page.getByLabel('Choose a password').fill('a long enough password');
      await page.getByRole('button', { name: 'Join' }).click();
      await page.waitForURL(`${suite.baseUrl}/app`);

      const nav = page.getByRole('navigation', { name: 'Console' });
      expect(await nav.getByRole('link', { name: 'Requests' }).count()).to.equal(1);
      expect(await nav.getByRole('link', { name: 'API keys' }).count(), 'a sender makes no keys').to.equal(0);
      await nav.getByRole('link', { name: 'Members' }).click();
      await page.getByRole('table', { name: 'Members of the account' }).getByText(email).waitFor();
      expect(await page.getByRole('button', { name: 'Send the invitation' }).count(), 'a sender invites no one').to.equal(0);
      expect(await page.getByRole('button', { name: 'Leave' }).count()).to.equal(1);
      await expectAccessible(page, 'the members page of a sender');
    });
  }
});
