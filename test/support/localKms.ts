import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

// local-kms (github.com/nsmithuk/local-kms), a server that speaks AWS KMS's protocol, seeded with one
// RSA signing key: the KMS a seal key can live in (src/pdf/sealKeyKms.ts). Built from the Go module
// proxy by `bash scripts/provision.sh local-kms`.

const BINARY = path.join(__dirname, '../../.cache/local-kms/bin/local-kms');
const REGION = 'eu-west-2';
/** What the AWS SDK reads: fake credentials (local-kms checks none), and no instance metadata to look for. */
const AWS_ENV: Record<string, string> = { AWS_ACCESS_KEY_ID: 'local-kms', AWS_SECRET_ACCESS_KEY: 'local-kms', AWS_EC2_METADATA_DISABLED: 'true' };

export interface LocalKms {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  region: string;
  keyId: string;
  stop(): Promise<void>;
}

/**
 * local-kms holding `keyPem` (an RSA 2048 private key, PKCS#8 PEM) as a SIGN_VERIFY key. It sets the
 * AWS SDK's credentials in process.env to fake ones (so that no real ones are looked for); `stop`
 * puts back what was there.
 */
export async function startLocalKms(keyPem: string): Promise<LocalKms> {
  await fs.access(BINARY).catch(() => {
    throw new Error(`local-kms is not built at ${BINARY}: run \`bash scripts/provision.sh local-kms\``);
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'signet-local-kms-'));
  const keyId = crypto.randomUUID();
  const pem = keyPem
    .trim()
    .split('\n')
    .map((line) => `          ${line}`)
    .join('\n');
  const seed = `Keys:\n  Asymmetric:\n    Rsa:\n      - Metadata:\n          KeyId: ${keyId}\n          KeyUsage: SIGN_VERIFY\n        PrivateKeyPem: |\n${pem}\n`;
  await fs.writeFile(path.join(dir, 'seed.yaml'), seed, { mode: 0o600 });

  // PORT=0: it listens where the OS says and logs the port (on every interface: it cannot be told loopback only).
  const child = spawn(BINARY, [], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', KMS_REGION: REGION, KMS_SEED_PATH: path.join(dir, 'seed.yaml'), KMS_DATA_PATH: path.join(dir, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let log = '';
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`local-kms did not start in 15 s:\n${log}`)), 15_000);
    let started: RegExpExecArray | null = null;
    // Read on after it started (a full pipe would stop it), keeping only the log up to then.
    const read = (chunk: Buffer) => {
      if (started) return;
      log += chunk.toString();
      started = /Local KMS started on \S*:(\d+)/.exec(log);
      if (!started) return;
      clearTimeout(timer);
      resolve(started[1]);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`local-kms exited (code ${code}):\n${log}`));
    });
  }).catch(async (error: Error) => {
    child.kill('SIGKILL');
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  });

  const saved = Object.fromEntries(Object.keys(AWS_ENV).map((name) => [name, process.env[name]]));
  Object.assign(process.env, AWS_ENV);
  const stop = async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    await fs.rm(dir, { recursive: true, force: true });
  };
  return { endpoint: `http://127.0.0.1:${port}`, region: REGION, keyId, stop };
}
