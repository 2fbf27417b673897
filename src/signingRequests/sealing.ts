import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import tls from 'node:tls';
import type { Config } from '../config';
import type { SealLevel } from '../domain/signingRequests';
import type { ArchivePolicy } from '../pdf/archiveDue';
import type { SealDocumentInput, SealedPdf, SealTimestamping } from '../pdf/seal';
import { loadSealCertificate } from '../pdf/sealCertificate';
import { certificatesOfPem, openSealKey } from '../pdf/sealKey';
import type { SealCertificate } from '../pdf/sealKeySource';
import { sealDocumentOnThread } from '../pdf/sealThread';

/** What is sealed of one document: its original bytes, the signatures stamped on it, and its certificate of completion. */
export type SealInput = Omit<SealDocumentInput, 'sealCertificate' | 'timestamping'>;

/** Seals one document of a completed request: the sealed PDF, and its SHA-256. */
export interface Sealer {
  seal(input: SealInput): Promise<SealedPdf>;
}

export type SealConfig = Pick<
  Config,
  | 'dataDir'
  | 'SEAL_P12_PATH'
  | 'SEAL_P12_PASSWORD'
  | 'SEAL_CHAIN_PATH'
  | 'SEAL_CERTIFICATE_PATH'
  | 'SEAL_PKCS11_MODULE'
  | 'SEAL_PKCS11_TOKEN_LABEL'
  | 'SEAL_PKCS11_PIN'
  | 'SEAL_PKCS11_KEY_LABEL'
  | 'SEAL_KMS_KEY_ID'
  | 'SEAL_KMS_REGION'
  | 'SEAL_KMS_ENDPOINT'
  | 'SEAL_TSA_URLS'
  | 'SEAL_TSA_TIMEOUT_MS'
  | 'SEAL_LEVEL'
  | 'SEAL_TRUST_ANCHORS_PATH'
  | 'SEAL_ARCHIVE_RENEWAL_DAYS'
  | 'SEAL_ALGORITHM_SUNSETS'
>;

/**
 * The seal: the signatures stamped, the certificate of completion appended, and the whole file signed
 * as a PAdES baseline signature at the configured level, on the seal thread.
 */
export function padesSealer(config: SealConfig): Sealer {
  return {
    async seal(input) {
      const sealCertificate = await sealCertificateOf(config);
      return sealDocumentOnThread({ ...input, sealCertificate, timestamping: await timestampingOf(config, sealCertificate) });
    },
  };
}

/** The seal certificate and where its key is: a PKCS#11 token, a KMS, SEAL_P12_PATH, or one generated into DATA_DIR. */
export function sealCertificateOf(config: SealConfig): Promise<SealCertificate> {
  const pkcs11 = config.SEAL_PKCS11_MODULE
    ? {
        module: config.SEAL_PKCS11_MODULE,
        tokenLabel: config.SEAL_PKCS11_TOKEN_LABEL ?? '',
        pin: config.SEAL_PKCS11_PIN ?? '',
        keyLabel: config.SEAL_PKCS11_KEY_LABEL ?? '',
      }
    : undefined;
  const kms = config.SEAL_KMS_KEY_ID ? { keyId: config.SEAL_KMS_KEY_ID, region: config.SEAL_KMS_REGION ?? '', endpoint: config.SEAL_KMS_ENDPOINT } : undefined;
  return loadSealCertificate({
    p12Path: config.SEAL_P12_PATH,
    p12Password: config.SEAL_P12_PASSWORD,
    chainPath: config.SEAL_CHAIN_PATH,
    certificatePath: config.SEAL_CERTIFICATE_PATH,
    pkcs11,
    kms,
    dataDir: config.dataDir,
  });
}

export const tsaUrlsOf = (config: SealConfig) =>
  config.SEAL_TSA_URLS.split(/[\s,]+/)
    .map((url) => url.trim())
    .filter(Boolean);

/** The configured level: SEAL_LEVEL, else B-LTA with a timestamp authority and B-B without. */
export const sealLevelOf = (config: SealConfig): SealLevel => config.SEAL_LEVEL ?? (tsaUrlsOf(config).length ? 'B-LTA' : 'B-B');

/** What a seal above B-B needs: the authorities, and the roots their chains must reach (SEAL_TRUST_ANCHORS_PATH, or the public ones and the seal's own root). */
export async function timestampingOf(config: SealConfig, certificate: SealCertificate): Promise<SealTimestamping | undefined> {
  const level = sealLevelOf(config);
  if (level === 'B-B') return undefined;
  const anchors = config.SEAL_TRUST_ANCHORS_PATH
    ? certificatesOfPem(await fs.readFile(config.SEAL_TRUST_ANCHORS_PATH, 'utf8'))
    : [...publicRoots(), ...selfSigned((await openSealKey(certificate)).certificates)];
  return {
    level,
    tsaUrls: tsaUrlsOf(config),
    timeoutMs: config.SEAL_TSA_TIMEOUT_MS,
    trustAnchors: anchors,
    ...archivePolicyOf(config),
  };
}

/** When a B-LTA file's archive is renewed: SEAL_ARCHIVE_RENEWAL_DAYS before its timestamp's certificate ends or an algorithm of SEAL_ALGORITHM_SUNSETS weakens. */
export function archivePolicyOf(config: Pick<SealConfig, 'SEAL_ARCHIVE_RENEWAL_DAYS' | 'SEAL_ALGORITHM_SUNSETS'>): ArchivePolicy {
  const entries = config.SEAL_ALGORITHM_SUNSETS.split(',')
    .map((entry) => entry.trim().split('='))
    .filter(([name, day]) => name && day);
  return { renewalMarginDays: config.SEAL_ARCHIVE_RENEWAL_DAYS, algorithmSunsets: Object.fromEntries(entries) };
}

// Node's bundled roots never change while it runs: read once, not at every seal.
let roots: Buffer[] | undefined;
const publicRoots = () => (roots ??= certificatesOfPem(tls.rootCertificates.join('\n')));

const selfSigned = (certificates: Buffer[]) =>
  certificates.filter((der) => {
    const cert = new crypto.X509Certificate(der);
    return cert.issuer === cert.subject && cert.verify(cert.publicKey);
  });

/**
 * Why the configured seal cannot be made, for start-up to refuse it with: a level its configuration
 * cannot reach (a timestamp level without an authority; B-LT or B-LTA with a certificate whose chain
 * is incomplete or names no OCSP responder or CRL), or a key that does not open.
 */
export async function sealSettingsProblems(config: SealConfig): Promise<string[]> {
  const level = sealLevelOf(config);
  if (level !== 'B-B' && tsaUrlsOf(config).length === 0) return [`SEAL_LEVEL=${level} needs a timestamp authority: set SEAL_TSA_URLS (or SEAL_LEVEL=B-B)`];
  let certificates: Buffer[];
  try {
    certificates = (await openSealKey(await sealCertificateOf(config))).certificates;
  } catch (error) {
    return [`the seal key does not open: ${(error as Error).message}`];
  }
  if (level !== 'B-LT' && level !== 'B-LTA') return [];
  const problems: string[] = [];
  const chain = certificates.map((der) => new crypto.X509Certificate(der));
  const top = chain[chain.length - 1];
  if (top.issuer !== top.subject)
    problems.push(`SEAL_LEVEL=${level}: the seal certificate's chain ends before its root (${top.issuer} is missing): add it to SEAL_CHAIN_PATH`);
  for (const cert of chain.filter((cert) => cert.issuer !== cert.subject)) {
    if (!namesRevocation(cert)) {
      problems.push(
        `SEAL_LEVEL=${level}: the certificate ${cert.subject.replace(/\n/g, ', ')} names no OCSP responder and no CRL, so no revocation data can be embedded (use SEAL_LEVEL=B-T, or a certificate from a CA that publishes revocation)`,
      );
    }
  }
  return problems;
}

const CRL_DISTRIBUTION_POINTS = Buffer.from('0603551d1f', 'hex'); // the DER of OID 2.5.29.31, as an extension names it

function namesRevocation(cert: crypto.X509Certificate): boolean {
  return /OCSP - URI:/.test(cert.infoAccess ?? '') || cert.raw.includes(CRL_DISTRIBUTION_POINTS);
}
