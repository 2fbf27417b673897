import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Signet, SignetError, verifyWebhook } from '../../sdk/src';
import { verifyWebhook as packageVerifier } from '../../src/webhooks/verify';
import type { Db } from '../../src/db';
import { makePdf } from '../support/pdfs';
import { eventually, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

/** The signing links e-mailed to `email` (the dev outbox: what the signer's inbox would show), newest first. */
export async function signingLinksMailedTo(db: Db, email: string) {
  const rows: { text: string }[] = await db('mail_outbox').whereLike('to_address', `%${email}%`).orderBy('id', 'desc').select('text');
  return rows.flatMap((row) => [...row.text.matchAll(/https?:\/\/[^\s<>"]+/g)].map(([url]) => url)).filter((url) => new URL(url).pathname.startsWith('/sign/'));
}

describe('the SDK (sdk/): the whole flow through it alone', function () {
  this.timeout(120_000);

  it('uploads a PDF, sends it, signs through the e-mailed link, waits, downloads the sealed PDF and checks it', async () => {
    const { apiKey, db, system } = await createTestAccount();
    const signet = new Signet({ apiKey, baseUrl: system.url! });
    const email = `ada-${crypto.randomUUID()}@example.com`;

    const pdf = await makePdf(['Non-disclosure agreement']);
    const document = await signet.documents.upload(pdf, 'nda.pdf');
    expect(document).to.include({ fileName: 'nda.pdf', status: 'ready', fileSize: pdf.length });

    const sent = await signet.signingRequests.create({ document_id: document.id, title: 'NDA', signers: [{ name: 'Ada Lovelace', email }] });
    expect(sent.status).to.equal('pending');

    const [link] = await eventually(async () => {
      const links = await signingLinksMailedTo(db, email);
      expect(links).to.have.length.greaterThan(0);
      return links;
    });
    const token = tokenOf(link);
    const view = await signet.signer.view(token);
    expect(view.request.title).to.equal('NDA');
    expect(await signet.signer.sign(token, { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } })).to.deep.equal({
      signerId: sent.signers[0].id,
      status: 'signed',
    });

    const stages: string[] = [];
    const done = await signet.signingRequests.waitForOutcome(sent.id, { timeoutMs: 60_000, intervalMs: 200, onProgress: (r) => stages.push(r.progress.stage) });
    expect(done.status).to.equal('completed');
    expect(stages.at(-1)).to.equal('finished');

    const sealed = await signet.signingRequests.download(sent.id);
    expect(crypto.createHash('sha256').update(sealed).digest('hex')).to.equal(done.sealedSha256);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-sdk-'));
    try {
      fs.writeFileSync(path.join(dir, 'sealed.pdf'), sealed);
      execFileSync('qpdf', ['--check', path.join(dir, 'sealed.pdf')]);
      const report = execFileSync('pdfsig', [path.join(dir, 'sealed.pdf')]).toString();
      expect(report).to.contain('Signature is Valid');
      expect(report).to.contain('Total document signed');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const verdict = await signet.verify(sealed);
    expect(verdict).to.include({ result: 'sealed_unmodified', signingRequestId: sent.id });
    const altered = Uint8Array.from(sealed);
    altered[10] ^= 0x20; // in the header's binary comment: inside the signed range, still a PDF
    expect((await signet.verify(altered)).result).to.equal('modified_after_seal');

    const listed = [];
    for await (const item of signet.documents.iterate({ limit: 1 })) listed.push(item.id);
    expect(listed).to.include(document.id);
  });

  it('answers an error as a SignetError with the API’s status, code and message', async () => {
    const { apiKey, system } = await createTestAccount();
    const signet = new Signet({ apiKey, baseUrl: `${system.url}/api/v1`, maxRetries: 0 });
    const missing = await signet.documents.get('doc_01jd8x3c6hf1z8k3q2v5n7m9pt').catch((error) => error);
    expect(missing).to.be.instanceOf(SignetError);
    expect(missing).to.include({ status: 404, code: 'not_found' });
    const invalid = await signet.signingRequests.create({ title: '', signers: [] }).catch((error) => error);
    expect(invalid).to.include({ status: 400, code: 'validation_error' });
    expect(invalid.details).to.have.length.greaterThan(0);
    const unauthorized = await new Signet({ apiKey: 'sk_live_wrong', baseUrl: system.url! }).account.get().catch((error) => error);
    expect(unauthorized).to.include({ status: 401 });
  });

  it('re-exports the webhook verifier of signet/webhooks', () => {
    expect(verifyWebhook).to.equal(packageVerifier);
  });
});

/** Runs `npx signet …` (src/cli/bin.js) against the service, as a user would. */
function cli(args: string[], env: Record<string, string | undefined>) {
  return new Promise<{ code: number | null; stdout: Buffer; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [path.resolve(__dirname, '../../src/cli/bin.js'), ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject).on('close', (code) => resolve({ code, stdout: Buffer.concat(stdout), stderr }));
  });
}

describe('npx signet send, status, download (through the SDK)', function () {
  this.timeout(180_000);

  it('sends a PDF, waits while the signer signs, reports the status and downloads the sealed PDF', async () => {
    const { apiKey, db, system } = await createTestAccount();
    const env = { SIGNET_API_KEY: apiKey, SIGNET_URL: system.url! };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-cli-'));
    try {
      fs.writeFileSync(path.join(dir, 'contract.pdf'), await makePdf(['Contract']));
      const email = `ada-${crypto.randomUUID()}@example.com`;
      const sending = cli(['send', path.join(dir, 'contract.pdf'), '--to', `Ada Lovelace <${email}>`, '--title', 'NDA', '--wait', '--timeout', '150'], env);
      // The signer, meanwhile, signs through the link she was e-mailed.
      const [link] = await eventually(async () => {
        const links = await signingLinksMailedTo(db, email);
        expect(links).to.have.length.greaterThan(0);
        return links;
      }, 90_000);
      const signer = new Signet({ apiKey, baseUrl: system.url! }).signer;
      await signer.sign(tokenOf(link), { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } });
      const sent = await sending;
      expect(sent.code, sent.stderr).to.equal(0);
      const result = JSON.parse(sent.stdout.toString());
      expect(result).to.deep.include({ title: 'NDA', status: 'completed', stage: 'finished' });
      expect(result.signers).to.deep.equal([{ id: result.signers[0].id, name: 'Ada Lovelace', email, status: 'signed' }]);
      expect(sent.stderr).to.contain(`sent ${result.id}`);

      const status = await cli(['status', result.id], env);
      expect(status.code, status.stderr).to.equal(0);
      expect(JSON.parse(status.stdout.toString())).to.deep.include({ id: result.id, status: 'completed' });

      const output = path.join(dir, 'signed.pdf');
      const download = await cli(['download', result.id, '-o', output], env);
      expect(download.code, download.stderr).to.equal(0);
      expect(crypto.createHash('sha256').update(fs.readFileSync(output)).digest('hex')).to.equal(result.sealedSha256);
      expect(execFileSync('pdfsig', [output]).toString()).to.contain('Signature is Valid');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says what is wrong: no key, an unknown request, a recipient it cannot read', async () => {
    const { apiKey, system } = await createTestAccount();
    const noKey = await cli(['status', 'sr_01jd8x3c6hf1z8k3q2v5n7m9pt'], { SIGNET_URL: system.url! });
    expect(noKey.code).to.equal(1);
    expect(noKey.stderr).to.contain('SIGNET_API_KEY is not set');
    const unknown = await cli(['status', 'sr_01jd8x3c6hf1z8k3q2v5n7m9pt'], { SIGNET_API_KEY: apiKey, SIGNET_URL: system.url! });
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(/signet: .*not found/i);
    const badRecipient = await cli(['send', 'x.pdf', '--to', 'Ada', '--title', 'NDA'], { SIGNET_API_KEY: apiKey, SIGNET_URL: system.url! });
    expect(badRecipient.code).to.equal(1);
    expect(badRecipient.stderr).to.contain('Name <email>');
  });
});
