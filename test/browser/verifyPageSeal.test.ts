import { expect } from 'chai';
import { VerificationSchema, type Verification } from '../../src/verification/schema';
import { expectAccessible } from '../support/axe';
import { desktopContext, expectNoSideways, phoneContext, useChromium, watchPage } from '../support/browser';
import { makePdf } from '../support/pdfs';
import { sharedSystem } from '../support/system';

// The /verify page's account of a seal's PAdES level: the level, its timestamp's time and authority,
// whether validation data is embedded, and at B-B plainly that the time is the server's own. The
// answers are the API's shape (checked against its schema), served to the page in place of the API's,
// so that each level is shown without sealing at it here (verification.test.ts answers them for real).

const signature = {
  kind: 'signature' as const,
  signer: 'Example Ltd document seal',
  signedAt: '2026-12-02T06:14:47.000Z',
  certificateFingerprint: 'f2'.repeat(32),
  trusted: true,
  intact: true,
  coversWholeFile: true,
  timestamp: null,
};
const sealedAt = {
  result: 'sealed_unmodified' as const,
  signingRequestId: 'req_01jabcdefghjkmnpqrstvwxyz0',
  documents: [{ id: 'doc_1', fileName: 'contract.pdf' }],
};
const answers: Record<string, Verification> = {
  'B-B': {
    ...sealedAt,
    signatures: [signature],
    seal: { level: 'B-B', timestampedAt: null, timestampAuthority: null, validationDataEmbedded: false, archiveTimestampedAt: null },
  },
  'B-LTA': {
    ...sealedAt,
    signatures: [
      { ...signature, coversWholeFile: false, timestamp: { time: '2026-12-02T06:14:47.259Z', authority: 'Signet Test TSA', intact: true } },
      { ...signature, kind: 'document_timestamp', signer: 'Signet Test TSA', signedAt: '2026-12-02T06:14:47.869Z', coversWholeFile: false },
    ],
    seal: {
      level: 'B-LTA',
      timestampedAt: '2026-12-02T06:14:47.259Z',
      timestampAuthority: 'Signet Test TSA',
      validationDataEmbedded: true,
      archiveTimestampedAt: '2026-12-02T06:14:47.869Z',
    },
  },
};

describe('the /verify page: the seal’s level', function () {
  this.timeout(120_000);
  const browser = useChromium();
  let baseUrl: string;

  before(async function () {
    this.timeout(120_000);
    baseUrl = (await sharedSystem()).url!;
    for (const answer of Object.values(answers)) VerificationSchema.parse(answer);
  });

  /** The page's answer (its status region's text) for a PDF the API answers `answer` for. */
  async function shown(open: typeof phoneContext, answer: Verification, where: string) {
    const context = await open(browser());
    const problems: string[] = [];
    const page = watchPage(await context.newPage(), baseUrl, problems);
    try {
      await page.route(`${baseUrl}/api/v1/verify`, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(answer) }));
      await page.goto(`${baseUrl}/verify`);
      await page.getByLabel('PDF to verify').setInputFiles({ name: 'sealed.pdf', mimeType: 'application/pdf', buffer: await makePdf() });
      await page.getByRole('button', { name: 'Verify', exact: true }).click();
      const status = page.getByRole('status');
      await status.getByRole('heading', { name: `Seal level: ${answer.seal!.level}` }).waitFor();
      await expectAccessible(page, where);
      await expectNoSideways(page);
      expect(problems).to.deep.equal([]);
      return (await status.textContent())!;
    } finally {
      await context.close();
    }
  }

  it('B-B on a phone: the level, no timestamp, no validation data, and that the time is the server’s own with no authority vouching for it', async () => {
    const text = await shown(phoneContext, answers['B-B'], '/verify B-B (phone)');
    expect(text)
      .to.contain('Seal level: B-B')
      .and.contain('LevelPAdES baseline B-B')
      .and.contain('Timestamped atnot timestamped')
      .and.contain('Timestamp authoritynone')
      .and.contain('Validation data embeddedno')
      .and.contain('the Signet server’s own clock: no timestamp authority vouches for it');
  });

  it('B-LTA on a desktop: the timestamp’s time (UTC) and authority, validation data embedded, the archive timestamp, and the document timestamp', async () => {
    const text = await shown(desktopContext, answers['B-LTA'], '/verify B-LTA (desktop)');
    expect(text)
      .to.contain('Seal level: B-LTA')
      .and.contain('Timestamped at2026-12-02 06:14 UTC')
      .and.contain('Timestamp authoritySignet Test TSA')
      .and.contain('Validation data embeddedyes')
      .and.contain('Archive timestamp2026-12-02 06:14 UTC')
      .and.contain('Timestamp2026-12-02 06:14 UTC by Signet Test TSA')
      .and.contain('Document timestamp 2')
      .and.not.contain('own clock');
  });
});
