import { expect } from 'chai';
import { describeViolations, seriousViolations } from '../support/axe';
import { expectNoSideways, phoneContext, useChromium, watchPage } from '../support/browser';
import { signedUp, uploadPdf } from '../support/consoleClient';
import { makePdf } from '../support/pdfs';
import { sharedSystem } from '../support/system';

// A request's page on a 375-px phone: a long address in the recipients table wraps at its @ or dots,
// never inside a word, and the page fits the screen.

describe('a signing request’s page on a phone', function () {
  this.timeout(120_000);
  const browser = useChromium();

  it('wraps a long address between its parts, not mid-word; no sideways scroll; axe finds nothing serious', async () => {
    const baseUrl = (await sharedSystem()).url!;
    const { browser: owner } = await signedUp(baseUrl);
    const { id: documentId } = await uploadPdf(owner, await makePdf(['Lease']));
    const email = 'christopher.longname-smithson@accounts-receivable.example.com';
    await owner.request('GET', '/app/requests/new');
    const sent = await owner.submit('/app/requests/new', '/app/requests', {
      document_id: documentId,
      title: 'Lease',
      'signers-0-name': 'Christopher Smithson',
      'signers-0-email': email,
    });
    expect(sent.status, sent.text).to.equal(303);

    const context = await phoneContext(browser());
    await context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: baseUrl })));
    const problems: string[] = [];
    const page = watchPage(await context.newPage(), baseUrl, problems);
    try {
      await page.goto(`${baseUrl}${sent.headers.get('location')}`);
      const address = page.locator('#signer-timeline .who .hint');
      await address.waitFor();
      // Each line of the wrapped address ends at a break the page offers: before the @ or after a dot.
      const lines = await address.evaluate((element) => {
        const range = document.createRange();
        const found: string[] = [];
        let line = '';
        let top: number | undefined;
        const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (let index = 0; index < node.textContent!.length; index++) {
            range.setStart(node, index);
            range.setEnd(node, index + 1);
            const rect = range.getClientRects()[0];
            if (rect && top !== undefined && rect.top > top + 2) {
              found.push(line);
              line = '';
            }
            if (rect) top = rect.top;
            line += node.textContent![index];
          }
        }
        return [...found, line];
      });
      expect(lines.join(''), 'the whole address is shown').to.contain(email);
      expect(lines.length, 'it wraps on a phone').to.be.greaterThan(1);
      for (const [index, line] of lines.slice(0, -1).entries()) {
        const [before, after] = [line.at(-1)!, lines[index + 1][0]];
        expect(after === '@' || /[.\-\s]/.test(before) || /\s/.test(after), `a line ends at a break the address offers: ${JSON.stringify(lines)}`).to.equal(
          true,
        );
      }
      await expectNoSideways(page);
      const violations = await seriousViolations(page);
      expect(violations, describeViolations('request page', violations).join('\n')).to.deep.equal([]);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
