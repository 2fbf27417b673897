import { type ChildProcess, execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startOnFreePorts } from './ports';

const root = path.resolve(__dirname, '../..');
const certomancer = path.join(root, '.cache/certomancer/bin/certomancer');
const config = path.join(root, 'test/support/pki/certomancer.yml');
const run = promisify(execFile);
const generateKeyPair = promisify(crypto.generateKeyPair);

export interface TestPki {
  /** A temporary folder holding everything below, removed when the process exits (or by the caller before). */
  dir: string;
  /** The root CA certificate (PEM), the trust anchor. */
  rootPem: string;
  /** The seal certificate's chain above it: the issuing CA, then the root (PEM). */
  chainPem: string;
  /** The seal (RSA 2048, with its chain), issued by the issuing CA, naming its OCSP responder and CRL. */
  seal: { p12: string; password: string };
  /** Another seal of the same CA, revoked: OCSP says so, the CRL lists it. */
  revokedSeal: { p12: string; password: string };
  /** A seal of the same CA naming no OCSP responder and no CRL distribution point. */
  sealNoRevocation: { p12: string; password: string };
  /** The seal's private key, PKCS#8 PEM. */
  sealKeyPem: string;
  /** The seal's certificate, PEM. */
  sealCertPem: string;
  /** An RFC 3161 TSA under the issuing CA (critical timeStamping EKU, naming the same OCSP responder and CRL). */
  tsaUrl: string;
  /** A TSA under the issuing CA whose certificate has expired. */
  expiredTsaUrl: string;
  /** A TSA under the issuing CA as tsaUrl's, but with an RSA 3072 key. */
  strongTsaUrl: string;
  /** A TSA under another root, not rootPem. */
  untrustedTsaUrl: string;
  /** The issuing CA's OCSP responder and CRL, as the seal certificate names them. */
  ocspUrl: string;
  crlUrl: string;
  /** Stops the services (connections are refused); idempotent. */
  stop(): Promise<void>;
  /** Starts them again on the same port, with the same keys and certificates. */
  start(): Promise<void>;
}

/**
 * A real test PKI on loopback, served by certomancer (scripts/provision.sh certomancer) from
 * test/support/pki/certomancer.yml: a root and an issuing CA with OCSP and CRLs, seal certificates, and
 * TSAs. Its keys are made afresh each time; the certificates name the port it listens on.
 */
export async function startTestPki(): Promise<TestPki> {
  if (!fs.existsSync(certomancer)) throw new Error(`no ${certomancer}: run bash scripts/provision.sh certomancer (npm test does)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-pki-'));
  const yaml = fs.readFileSync(config, 'utf8');
  fs.writeFileSync(path.join(dir, 'certomancer.yml'), yaml);
  fs.mkdirSync(path.join(dir, 'keys'));
  const keyFiles = [...yaml.matchAll(/path: ([\w.-]+\.key\.pem)/g)].map((match) => match[1]);
  await Promise.all(
    keyFiles.map(async (file) => {
      const { privateKey } = await generateKeyPair('rsa', {
        modulusLength: Number(/\.rsa(\d+)\./.exec(file)?.[1] ?? 2048),
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      });
      fs.writeFileSync(path.join(dir, 'keys', file), privateKey);
    }),
  );

  const password = 'signet-test-pki';
  const out = path.join(dir, 'out'); // certomancer's output: a folder per issuer
  const logPath = path.join(dir, 'certomancer.log');
  const cli = (port: number, ...args: string[]) => ['--config', path.join(dir, 'certomancer.yml'), '--service-url-prefix', `http://127.0.0.1:${port}`, ...args];
  let running: { child: ChildProcess; exited: Promise<void> } | undefined;
  const alive = (child?: ChildProcess) => child !== undefined && child.exitCode === null && child.signalCode === null;
  // A failed test leaves no server and no keys behind.
  process.on('exit', () => {
    running?.child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The animator on `port`, once it has bound the port (as its log says) and serves the issuing CA's CRL. */
  async function animate(port: number) {
    const log = fs.openSync(logPath, 'w');
    // --no-time-override: the services answer at the current time, whatever a request's headers say.
    const child = spawn(certomancer, cli(port, 'animate', '--port', String(port), '--no-web-ui', '--no-time-override'), {
      stdio: ['ignore', log, log],
      env: { ...process.env, TZ: 'UTC', PYTHONUNBUFFERED: '1' },
    });
    fs.closeSync(log);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const crl = `http://127.0.0.1:${port}/signet/crls/interm/latest.crl`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      // An animator that exits (its port taken since it was chosen) fails at once, with its log.
      if (!alive(child)) throw new Error(`certomancer exited (${logPath}):\n${fs.readFileSync(logPath, 'utf8').slice(-3000)}`);
      const answered = await fetch(crl, { signal: AbortSignal.timeout(1000) }).then(
        (response) => response.ok,
        () => false,
      );
      // (Its own log: another server may have taken the port in between and answer in its place.)
      if (answered && alive(child) && fs.readFileSync(logPath, 'utf8').includes(`Running on http://127.0.0.1:${port}`)) return { child, exited };
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        await exited;
        throw new Error(`certomancer did not answer within 20 s (${logPath})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  // The certificates name the services' URLs, so they are made for the port chosen, and again for another if it was taken.
  const port = await startOnFreePorts(1, async ([chosen]) => {
    fs.rmSync(out, { recursive: true, force: true });
    await run(certomancer, cli(chosen, 'mass-summon', '--pfx-pass', password, 'signet', out), { timeout: 60_000 });
    running = await animate(chosen);
    return chosen;
  });
  const prefix = `http://127.0.0.1:${port}`;
  const chainPem = path.join(dir, 'chain.pem');
  fs.writeFileSync(chainPem, fs.readFileSync(path.join(out, 'root/interm.cert.pem'), 'utf8') + fs.readFileSync(path.join(out, 'root/root.cert.pem'), 'utf8'));

  return {
    dir,
    rootPem: path.join(out, 'root/root.cert.pem'),
    chainPem,
    seal: { p12: path.join(out, 'interm/seal.pfx'), password },
    revokedSeal: { p12: path.join(out, 'interm/revoked-seal.pfx'), password },
    sealNoRevocation: { p12: path.join(out, 'interm/seal-no-revocation.pfx'), password },
    sealKeyPem: path.join(dir, 'keys/seal.key.pem'),
    sealCertPem: path.join(out, 'interm/seal.cert.pem'),
    tsaUrl: `${prefix}/signet/tsa/tsa`,
    expiredTsaUrl: `${prefix}/signet/tsa/expired-tsa`,
    strongTsaUrl: `${prefix}/signet/tsa/strong-tsa`,
    untrustedTsaUrl: `${prefix}/untrusted/tsa/tsa`,
    ocspUrl: `${prefix}/signet/ocsp/interm`,
    crlUrl: `${prefix}/signet/crls/interm/latest.crl`,
    async stop() {
      const stopping = running;
      running = undefined;
      if (!stopping || !alive(stopping.child)) return;
      stopping.child.kill('SIGTERM');
      const timer = setTimeout(() => stopping.child.kill('SIGKILL'), 5000);
      await stopping.exited;
      clearTimeout(timer);
    },
    async start() {
      if (!alive(running?.child)) running = await animate(port);
    },
  };
}
