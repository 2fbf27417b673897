import crypto from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { DIGESTS } from './sealServices';

// A B-LTA file proves itself for as long as its newest document timestamp does: until that
// timestamp's authority certificate ends, or until an algorithm it rests on (its digests, its
// authority's key) is no longer trusted. Its archive is renewed a margin before the earlier of the two.

/** When algorithms stop being trusted: `sha1`, `rsa-2048` (an RSA key of that many bits), `ec-prime256v1` (a curve, as OpenSSL names it) → that day. */
export type AlgorithmSunsets = Record<string, string>;

export interface ArchivePolicy {
  renewalMarginDays: number;
  algorithmSunsets: AlgorithmSunsets;
}

export interface ArchiveDeadline {
  /** ISO 8601: the earlier of the two ends, less the margin. */
  renewAfter: string;
  /** The algorithms the newest document timestamp rests on, by the names of AlgorithmSunsets. */
  algorithms: string[];
  /** What sets renewAfter, in words: "its authority certificate ends 2040-01-01" or "rsa-2048 is trusted until 2031-01-01". */
  because: string;
}

const DAY_MS = 86_400_000;

/** The names a certificate's public key goes by: rsa-2048, ec-prime256v1, ed25519. */
function keyName(certificate: crypto.X509Certificate): string {
  const key = certificate.publicKey;
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss') return `rsa-${details.modulusLength}`;
  if (key.asymmetricKeyType === 'ec') return `ec-${details.namedCurve}`;
  return String(key.asymmetricKeyType);
}

const digestName = (oid: string) => DIGESTS[oid] ?? oid;

/** When the file's newest document timestamp is due for renewal, and why then. */
export function archiveDue(pdf: Uint8Array, policy: ArchivePolicy): ArchiveDeadline {
  const signedData = newestSignature(pdf);
  const signer = signedData.signerInfos[0];
  const sid = signer.sid as pkijs.IssuerAndSerialNumber;
  const certificate = signedData.certificates?.find(
    (cert): cert is pkijs.Certificate => cert instanceof pkijs.Certificate && cert.serialNumber.isEqual(sid.serialNumber) && cert.issuer.isEqual(sid.issuer),
  );
  if (!certificate) throw new Error("the document timestamp does not carry its authority's certificate");
  const eContent = signedData.encapContentInfo.eContent;
  if (!eContent) throw new Error('the document timestamp carries no TSTInfo');
  const tstInfo = pkijs.TSTInfo.fromBER(new Uint8Array(eContent.getValue()));
  const authority = new crypto.X509Certificate(Buffer.from(certificate.toSchema().toBER(false)));
  const algorithms = [
    ...new Set([digestName(tstInfo.messageImprint.hashAlgorithm.algorithmId), digestName(signer.digestAlgorithm.algorithmId), keyName(authority)]),
  ];
  let end = { at: certificate.notAfter.value.getTime(), because: `its authority certificate ends ${certificate.notAfter.value.toISOString().slice(0, 10)}` };
  for (const algorithm of algorithms) {
    const sunset = policy.algorithmSunsets[algorithm];
    if (sunset && Date.parse(sunset) < end.at) end = { at: Date.parse(sunset), because: `${algorithm} is trusted until ${sunset}` };
  }
  return { renewAfter: new Date(end.at - policy.renewalMarginDays * DAY_MS).toISOString(), algorithms, because: end.because };
}

/** The algorithms whose trust ends within the margin from `now`: a file resting on one is due, whenever its renewAfter was noted. */
export function weakenedAlgorithms(policy: ArchivePolicy, now = new Date()): string[] {
  const horizon = now.getTime() + policy.renewalMarginDays * DAY_MS;
  return Object.entries(policy.algorithmSunsets)
    .filter(([, sunset]) => Date.parse(sunset) <= horizon)
    .map(([algorithm]) => algorithm);
}

/** Whether a file with this deadline is due now: its day has come, or it rests on an algorithm weakened within the margin (findArchivesDue asks the same in SQL). */
export function isArchiveDue(deadline: Pick<ArchiveDeadline, 'renewAfter' | 'algorithms'>, policy: ArchivePolicy, now = new Date()): boolean {
  const weakened = weakenedAlgorithms(policy, now);
  return Date.parse(deadline.renewAfter) <= now.getTime() || deadline.algorithms.some((algorithm) => weakened.includes(algorithm));
}

/** The CMS SignedData of the file's last signature (a B-LTA file's newest document timestamp). */
function newestSignature(pdf: Uint8Array): pkijs.SignedData {
  const text = Buffer.from(pdf).toString('latin1');
  const ranges = [...text.matchAll(/\/ByteRange\s*\[\s*0\s+(\d+)\s+(\d+)\s+\d+\s*\]/g)];
  const [, end, start] = ranges[ranges.length - 1].map(Number);
  // The DER is followed by the placeholder's zero padding: read by its own length (a zero the DER ends with is its own).
  const { result } = asn1js.fromBER(Buffer.from(text.slice(end + 1, start - 1), 'hex'));
  return new pkijs.SignedData({ schema: new pkijs.ContentInfo({ schema: result }).content });
}
