import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

// A SoftHSM2 token of its own in a temporary directory, holding one RSA private key: the PKCS#11
// token a seal key can live on (src/pdf/sealKeyPkcs11.ts). SoftHSM2 comes from Debian's package
// (`bash scripts/provision.sh softhsm`).

/** Where Debian's softhsm2 puts the PKCS#11 module. */
const MODULE = '/usr/lib/softhsm/libsofthsm2.so';
const PROVISION = 'bash scripts/provision.sh softhsm';

const run = promisify(execFile);

export interface SoftHsmToken {
  /** The PKCS#11 module to load. */
  module: string;
  tokenLabel: string;
  pin: string;
  keyLabel: string;
  /** SOFTHSM2_CONF, pointing at this token's configuration. */
  env: Record<string, string>;
  /** The temporary directory of the configuration and the token; remove it when done. */
  dir: string;
}

/**
 * A new token holding `keyPem` (an RSA private key, PKCS#8 PEM) under the label `keyLabel`.
 * SoftHSM2 reads SOFTHSM2_CONF once, when the module is first initialized in the process: put `env`
 * into process.env before anything loads the module (and use one token's configuration per process).
 */
export async function makeSoftHsmToken(keyPem: string): Promise<SoftHsmToken> {
  await fs.access(MODULE).catch(() => {
    throw new Error(`no SoftHSM2 PKCS#11 module at ${MODULE}: run \`${PROVISION}\``);
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'signet-softhsm-'));
  const config = path.join(dir, 'softhsm2.conf');
  await fs.mkdir(path.join(dir, 'tokens'));
  await fs.writeFile(config, `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  await fs.writeFile(path.join(dir, 'key.pem'), keyPem, { mode: 0o600 });
  const env = { SOFTHSM2_CONF: config };
  const token = { module: MODULE, tokenLabel: 'signet-seal', pin: crypto.randomInt(100_000, 999_999).toString(), keyLabel: 'seal', env, dir };
  const util = (...args: string[]) =>
    run('softhsm2-util', args, { env: { ...process.env, ...env }, timeout: 30_000 }).catch((error: NodeJS.ErrnoException & { stderr?: string }) => {
      if (error.code === 'ENOENT') throw new Error(`softhsm2-util is not installed: run \`${PROVISION}\``);
      throw new Error(`softhsm2-util ${args[0]} failed: ${error.stderr || error.message}`);
    });
  const soPin = crypto.randomInt(100_000, 999_999).toString();
  try {
    await util('--init-token', '--free', '--label', token.tokenLabel, '--pin', token.pin, '--so-pin', soPin);
    await util('--import', path.join(dir, 'key.pem'), '--token', token.tokenLabel, '--label', token.keyLabel, '--id', '01', '--pin', token.pin);
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
  await fs.rm(path.join(dir, 'key.pem'));
  return token;
}
