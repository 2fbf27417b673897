import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import * as pkcs11js from 'pkcs11js';
import { DEFAULT_ALGORITHM_SUNSETS } from '../../src/config';
import { openSealKey } from '../../src/pdf/sealKey';
import { stopSealThread } from '../../src/pdf/sealThread';
import { padesSealer } from '../../src/signingRequests/sealing';
import { makePdf } from '../support/pdfs';
import type { KmsKeySource, Pkcs11KeySource, SealCertificate } from '../../src/pdf/sealKeySource';
import { startLocalKms, type LocalKms } from '../support/localKms';
import { makeSoftHsmToken, type SoftHsmToken } from '../support/softhsm';

// The seal key from each of its sources: a PKCS#12 file, a PKCS#11 token (SoftHSM2) and KMS
// (local-kms), the same RSA key in each. PKCS#1 v1.5 is deterministic, so all three sign alike.

const run = promisify(execFile);
const data = Buffer.from('the signed attributes of a sealed PDF');

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('seal keys: PKCS#12, PKCS#11 and KMS', function () {
  let dir: string;
  let keyPem: string;
  let certificate: Buffer;
  let otherCertificate: Buffer; // of another key
  let token: SoftHsmToken;
  let kms: LocalKms | undefined;
  let pkcs11Source: Pkcs11KeySource;
  let kmsSource: KmsKeySource;

  before(async function () {
    this.timeout(60_000);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'signet-seal-keys-'));
    const file = (name: string) => path.join(dir, name);
    keyPem = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    await fs.writeFile(file('key.pem'), keyPem);
    const selfSigned = async (key: string, out: string) => {
      await run('openssl', ['req', '-x509', '-key', key, '-subj', '/CN=Signet test seal', '-days', '2', '-outform', 'DER', '-out', out]);
      return fs.readFile(out);
    };
    certificate = await selfSigned(file('key.pem'), file('cert.der'));
    await fs.writeFile(file('other.pem'), crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    otherCertificate = await selfSigned(file('other.pem'), file('other.der'));

    // SoftHSM2 reads its configuration when the module is first initialized: before anything loads it.
    token = await makeSoftHsmToken(keyPem);
    Object.assign(process.env, token.env);
    kms = await startLocalKms(keyPem);
    pkcs11Source = { pkcs11: { module: token.module, tokenLabel: token.tokenLabel, pin: token.pin, keyLabel: token.keyLabel }, certificates: [certificate] };
    kmsSource = { kms: { keyId: kms.keyId, region: kms.region, endpoint: kms.endpoint }, certificates: [certificate] };
  });

  after(async () => {
    await kms?.stop();
    if (token) await fs.rm(token.dir, { recursive: true, force: true });
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const p12 = async (name: string, ...options: string[]) => {
    const out = path.join(dir, name);
    await fs.writeFile(path.join(dir, 'cert.pem'), new crypto.X509Certificate(certificate).toString());
    await run('openssl', [
      'pkcs12',
      '-export',
      ...options,
      '-inkey',
      path.join(dir, 'key.pem'),
      '-in',
      path.join(dir, 'cert.pem'),
      '-passout',
      'pass:secret',
      '-out',
      out,
    ]);
    return { p12: await fs.readFile(out), password: 'secret' };
  };

  it('signs alike from a PKCS#12 file, a PKCS#11 token and KMS, verifiably with the certificate', async () => {
    const sources: [string, SealCertificate][] = [
      ['PKCS#12', await p12('modern.p12')],
      ['PKCS#11', pkcs11Source],
      ['KMS', kmsSource],
    ];
    const signatures: Buffer[] = [];
    for (const [name, source] of sources) {
      const key = await openSealKey(source);
      expect(key.certificates, name).to.deep.equal([certificate]);
      const signature = await key.sign(data);
      expect(crypto.verify('sha256', data, new crypto.X509Certificate(certificate).publicKey, signature), name).to.equal(true);
      signatures.push(signature);

      const count = 20;
      const started = process.hrtime.bigint();
      for (let i = 0; i < count; i++) await key.sign(data);
      console.log(`      ${name}: ${(Number(process.hrtime.bigint() - started) / 1e6 / count).toFixed(2)} ms per signature`);
    }
    expect(signatures[1].equals(signatures[0]), 'PKCS#11 as PKCS#12').to.equal(true);
    expect(signatures[2].equals(signatures[0]), 'KMS as PKCS#12').to.equal(true);
  });

  it('opens a legacy PKCS#12 file (RC2-40 certificates, 3DES key, SHA-1 MAC)', async () => {
    const key = await openSealKey(await p12('legacy.p12', '-legacy'));
    expect(crypto.verify('sha256', data, new crypto.X509Certificate(certificate).publicKey, await key.sign(data))).to.equal(true);
  });

  it('says what is wrong with a PKCS#11 source, without its PIN', async () => {
    // A token this process is logged in to takes any PIN (login is the process's, not the session's): log out first.
    closeAllSessions(token);
    const wrong = async (change: Partial<Pkcs11KeySource['pkcs11']>, certificates = [certificate]) =>
      rejection(openSealKey({ pkcs11: { ...pkcs11Source.pkcs11, ...change }, certificates }));
    expect((await wrong({ pin: '000000' })).message).to.equal(`the PKCS#11 token "${token.tokenLabel}" refused the PIN`);
    expect((await wrong({ tokenLabel: 'no-such-token' })).message).to.equal('no PKCS#11 token labelled "no-such-token"');
    expect((await wrong({ keyLabel: 'no-such-key' })).message).to.equal(`no RSA private key labelled "no-such-key" on the PKCS#11 token "${token.tokenLabel}"`);
    expect((await wrong({}, [otherCertificate])).message).to.match(/does not match the seal certificate's public key/);
    expect((await wrong({ module: path.join(dir, 'missing.so') })).message).to.match(/^cannot load the PKCS#11 module .*missing\.so/);
  });

  it('reopens a PKCS#11 session that broke', async () => {
    const key = await openSealKey(pkcs11Source);
    closeAllSessions(token);
    expect((await rejection(key.sign(data))).message).to.match(/failed: CKR_SESSION_HANDLE_INVALID/);
    expect(crypto.verify('sha256', data, new crypto.X509Certificate(certificate).publicKey, await key.sign(data))).to.equal(true);
  });

  it('signs with a PKCS#11 token from a worker thread (as the seal thread does), again after one ended', async () => {
    const expected = crypto.sign('sha256', data, keyPem);
    for (let round = 0; round < 2; round++) {
      const signature = await signOnThread(pkcs11Source);
      expect(signature.equals(expected), `round ${round}`).to.equal(true);
    }
  });

  it('seals a PDF on the seal thread with the key on the token and with the key in KMS: pdfsig finds each seal valid', async () => {
    const certificatePath = path.join(dir, 'cert.pem');
    await fs.writeFile(certificatePath, new crypto.X509Certificate(certificate).toString());
    const base = {
      dataDir: dir,
      SEAL_P12_PASSWORD: '',
      SEAL_TSA_URLS: '',
      SEAL_TSA_TIMEOUT_MS: 10_000,
      SEAL_ARCHIVE_RENEWAL_DAYS: 90,
      SEAL_ALGORITHM_SUNSETS: DEFAULT_ALGORITHM_SUNSETS,
      SEAL_CERTIFICATE_PATH: certificatePath,
    };
    const configs = {
      'PKCS#11': {
        ...base,
        SEAL_PKCS11_MODULE: token.module,
        SEAL_PKCS11_TOKEN_LABEL: token.tokenLabel,
        SEAL_PKCS11_PIN: token.pin,
        SEAL_PKCS11_KEY_LABEL: token.keyLabel,
      },
      KMS: { ...base, SEAL_KMS_KEY_ID: kmsSource.kms.keyId, SEAL_KMS_REGION: kmsSource.kms.region, SEAL_KMS_ENDPOINT: kmsSource.kms.endpoint },
    };
    // A thread copies process.env when it starts: one an earlier test started knows neither the token's
    // configuration nor local-kms's credentials.
    await stopSealThread();
    try {
      for (const [name, config] of Object.entries(configs)) {
        const certificateOfCompletion = {
          requestId: 'req_x',
          title: 'Lease',
          document: { name: 'lease.pdf', pageCount: 1 },
          documents: [],
          events: [],
          signers: [],
        };
        const sealed = await padesSealer(config).seal({ original: await makePdf(['A lease']), signatures: [], certificate: certificateOfCompletion });
        const file = path.join(dir, `${name.replace('#', '')}.pdf`);
        await fs.writeFile(file, sealed.pdf);
        const { stdout } = await run('pdfsig', [file]).catch((error: { stdout: string }) => error);
        expect(stdout, name).to.contain('Signer Certificate Common Name: Signet test seal').and.contain('Signature Validation: Signature is Valid.');
        expect(sealed.certificateSha256, name).to.equal(crypto.createHash('sha256').update(certificate).digest('hex'));
      }
    } finally {
      await stopSealThread();
    }
  });

  it('says when the KMS key is not the certificate’s, or not there', async () => {
    expect((await rejection(openSealKey({ ...kmsSource, certificates: [otherCertificate] }))).message).to.equal(
      `the KMS key ${kmsSource.kms.keyId} does not match the seal certificate's public key`,
    );
    const missing = crypto.randomUUID();
    expect((await rejection(openSealKey({ kms: { ...kmsSource.kms, keyId: missing }, certificates: [certificate] }))).message).to.match(
      new RegExp(`^reading the public key of the KMS key ${missing} failed: NotFoundException`),
    );
  });
});

/** Closes every session of the token, from another user of its module in this process (as a removed token would). */
function closeAllSessions({ module, tokenLabel }: SoftHsmToken) {
  const other = new pkcs11js.PKCS11();
  other.load(module);
  const slot = other.C_GetSlotList(true).find((slot) => other.C_GetTokenInfo(slot).label.trimEnd() === tokenLabel)!;
  other.C_CloseAllSessions(slot);
}

/** Opens the seal key on a new worker thread, signs `data` there, and ends the thread. */
async function signOnThread(source: Pkcs11KeySource): Promise<Buffer> {
  // Plain JavaScript, as src/pdf/sealThread.cjs: a thread does not inherit mocha's TypeScript loader.
  const program = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { openPkcs11Key } = require('tsx/cjs/api').require(workerData.sealKey, workerData.sealKey);
    openPkcs11Key(workerData.source)
      .then((key) => key.sign(Buffer.from(workerData.data)))
      .then((signature) => parentPort.postMessage({ signature }), (error) => parentPort.postMessage({ error: error.message }));`;
  const worker = new Worker(program, { eval: true, workerData: { sealKey: path.join(__dirname, '../../src/pdf/sealKeyPkcs11.ts'), source, data } });
  try {
    const reply = await new Promise<{ signature?: Uint8Array; error?: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the worker thread did not answer in 20 s')), 20_000);
      worker.once('message', (message) => (clearTimeout(timer), resolve(message)));
      worker.once('error', (error) => (clearTimeout(timer), reject(error)));
    });
    if (reply.error !== undefined) throw new Error(`on the worker thread: ${reply.error}`);
    return Buffer.from(reply.signature!);
  } finally {
    await worker.terminate();
  }
}
