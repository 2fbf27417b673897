import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import forge from 'node-forge';

export interface SealCertificate {
  p12: Buffer;
  password: string;
}

export interface SealCertificateOptions {
  p12Path?: string;
  p12Password?: string;
  dataDir: string;
}

const GENERATED_FILE = 'seal.p12';
const VALIDITY_YEARS = 10;

/**
 * The certificate that seals completed documents: the configured PKCS#12 file, or else a self-signed one
 * generated once under dataDir. The generated file has an empty password; its 0600 mode protects it,
 * as a password file kept beside it would add nothing.
 */
export async function loadSealCertificate(options: SealCertificateOptions): Promise<SealCertificate> {
  if (options.p12Path) return { p12: await fs.readFile(options.p12Path), password: options.p12Password ?? '' };
  const target = path.join(options.dataDir, GENERATED_FILE);
  const existing = await readIfPresent(target);
  if (existing) return { p12: existing, password: '' };
  await fs.mkdir(options.dataDir, { recursive: true });
  const temporary = `${target}.${process.pid}.${crypto.randomUUID()}.tmp`;
  await fs.writeFile(temporary, await generateSelfSignedP12(), { mode: 0o600 });
  try {
    // link never replaces an existing file, so when two first calls race, the first certificate wins for both.
    await fs.link(temporary, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await fs.rm(temporary, { force: true });
  }
  return { p12: await fs.readFile(target), password: '' };
}

async function readIfPresent(file: string) {
  try {
    return await fs.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A self-signed seal certificate as PKCS#12 with an empty password (also `npx signet seal-certificate`). */
export async function generateSelfSignedP12(): Promise<Buffer> {
  // Node's native key generation takes milliseconds where node-forge's pure-JS one takes seconds.
  const { privateKey: privateKeyPem } = await new Promise<{ privateKey: string }>((resolve, reject) =>
    crypto.generateKeyPair(
      'rsa',
      { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } },
      (error, _publicKey, privateKey) => (error ? reject(error) : resolve({ privateKey })),
    ),
  );
  const privateKey = forge.pki.privateKeyFromPem(privateKeyPem) as forge.pki.rsa.PrivateKey;
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.setRsaPublicKey(privateKey.n, privateKey.e);
  certificate.serialNumber = `01${crypto.randomBytes(15).toString('hex')}`;
  const now = new Date();
  certificate.validity.notBefore = now;
  certificate.validity.notAfter = new Date(now);
  certificate.validity.notAfter.setUTCFullYear(now.getUTCFullYear() + VALIDITY_YEARS);
  const subject = [{ name: 'commonName', value: 'Signet document seal' }];
  certificate.setSubject(subject);
  certificate.setIssuer(subject);
  certificate.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', critical: true, digitalSignature: true, nonRepudiation: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  certificate.sign(privateKey, forge.md.sha256.create());
  const asn1 = forge.pkcs12.toPkcs12Asn1(privateKey, [certificate], '', { algorithm: '3des', friendlyName: 'Signet document seal' });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}
