import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import forge from 'node-forge';

import { certificatesOfPem } from './sealKey';
import type { KmsKeySource, Pkcs11KeySource, SealCertificate } from './sealKeySource';

export interface SealCertificateOptions {
  p12Path?: string;
  p12Password?: string;
  /** PEM: the certificates above the seal certificate (intermediates, root). */
  chainPath?: string;
  /** PEM: the seal certificate, for a key on a PKCS#11 token or in a KMS. */
  certificatePath?: string;
  pkcs11?: Pkcs11KeySource['pkcs11'];
  kms?: KmsKeySource['kms'];
  dataDir: string;
}

const GENERATED_FILE = 'seal.p12';
const VALIDITY_YEARS = 10;

/**
 * The certificate that seals completed documents and where its key is: a key on a PKCS#11 token or in a
 * KMS (with the certificate beside it), the configured PKCS#12 file, or else a self-signed one generated
 * once under dataDir. The generated file has an empty password; its 0600 mode protects it, as a password
 * file kept beside it would add nothing.
 */
export async function loadSealCertificate(options: SealCertificateOptions): Promise<SealCertificate> {
  const chain = options.chainPath ? certificatesOfPem(await fs.readFile(options.chainPath, 'utf8')) : [];
  if (options.pkcs11 || options.kms) {
    if (!options.certificatePath) throw new Error('a seal key on a PKCS#11 token or in a KMS needs its certificate (SEAL_CERTIFICATE_PATH)');
    const certificates = [...certificatesOfPem(await fs.readFile(options.certificatePath, 'utf8')), ...chain];
    return options.pkcs11 ? { pkcs11: options.pkcs11, certificates } : { kms: options.kms!, certificates };
  }
  if (options.p12Path) return { p12: await fs.readFile(options.p12Path), password: options.p12Password ?? '', chain };
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
