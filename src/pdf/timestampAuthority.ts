import crypto from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { DigestAlgorithm, TimestampAuthority } from '@libpdf/core';
import {
  boundedFetch,
  bytesOf,
  DIGESTS,
  extendedKeyUsage,
  knownCertificate,
  parseDer,
  reason,
  SealServiceError,
  signatureChecks,
  validAt,
  withoutCredentials,
  type KnownCertificate,
} from './sealServices';

// RFC 3161 timestamps for the seal (the signature timestamp of B-T, the document timestamp of B-LTA),
// each answer checked before it is used: a token the seal embeds is one a validator will check, and an
// authority that answers wrongly must cost a retry, not a seal that fails validation years later.

export interface TsaSettings {
  urls: string[];
  timeoutMs: number;
  /** DER root certificates: a timestamp authority's chain must reach one. */
  trustAnchors: Uint8Array[];
  /** Default 1 MiB. */
  maxBytes?: number;
}

export interface TimestampedBy {
  url: string;
  genTime: Date;
  tsaName: string;
}

const OID = {
  signedData: '1.2.840.113549.1.7.2',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  timeStamping: '1.3.6.1.5.5.7.3.8',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
};
const IMPRINT_ALGORITHMS: Record<DigestAlgorithm, { oid: string; length: number }> = {
  'SHA-256': { oid: '2.16.840.1.101.3.4.2.1', length: 32 },
  'SHA-384': { oid: '2.16.840.1.101.3.4.2.2', length: 48 },
  'SHA-512': { oid: '2.16.840.1.101.3.4.2.3', length: 64 },
};
/** A chain longer than this is no chain we follow. */
const MAX_CHAIN = 8;

/**
 * @libpdf/core's TimestampAuthority: the authorities in order, the next when one fails; throws
 * SealServiceError('timestamp authority', lastUrl, 'each url: why') when all fail.
 */
export function checkedTimestampAuthority(settings: TsaSettings): TimestampAuthority & { lastAuthority?: TimestampedBy } {
  const anchors = settings.trustAnchors.map(knownCertificate);
  const authority: TimestampAuthority & { lastAuthority?: TimestampedBy } = {
    async timestamp(digest, algorithm) {
      authority.lastAuthority = undefined;
      const failures: string[] = [];
      for (const url of settings.urls) {
        try {
          const { token, by } = await timestampFrom(url, digest, algorithm, settings, anchors);
          authority.lastAuthority = by;
          return token;
        } catch (error) {
          failures.push(`${withoutCredentials(url)}: ${reason(error)}`);
        }
      }
      const lastUrl = settings.urls.at(-1);
      throw new SealServiceError('timestamp authority', lastUrl, failures.join('; ') || 'no timestamp authority is configured');
    },
  };
  return authority;
}

/** One authority's token for the digest, checked; throws why not. */
async function timestampFrom(url: string, digest: Uint8Array, algorithm: DigestAlgorithm, settings: TsaSettings, anchors: KnownCertificate[]) {
  const imprint = IMPRINT_ALGORITHMS[algorithm];
  if (!imprint || digest.byteLength !== imprint.length) throw new Error(`a ${algorithm} digest of ${digest.byteLength} bytes`);
  // A fresh nonce per request: a replayed answer, for this digest or not, cannot carry it.
  const nonce = crypto.randomBytes(8).readBigUInt64BE();
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: imprint.oid, algorithmParams: new asn1js.Null() }),
      hashedMessage: new asn1js.OctetString({ valueHex: digest }),
    }),
    nonce: asn1js.Integer.fromBigInt(nonce),
    certReq: true,
  });
  const answer = await boundedFetch(url, {
    method: 'POST',
    body: new Uint8Array(request.toSchema().toBER(false)),
    headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
    timeoutMs: settings.timeoutMs,
    maxBytes: settings.maxBytes ?? 1024 * 1024,
  });
  const token = grantedToken(answer);
  const { tstInfo, signer, certificates } = checkedToken(token);
  if (tstInfo.nonce?.toBigInt() !== nonce) throw new Error('the token does not carry the nonce of the request (a replayed answer?)');
  const asked = tstInfo.messageImprint;
  if (asked.hashAlgorithm.algorithmId !== imprint.oid || !Buffer.from(asked.hashedMessage.valueBlock.valueHexView).equals(digest)) {
    throw new Error('the token is for another digest than the one asked');
  }
  checkTsaCertificate(signer, tstInfo.genTime);
  const problem = chainProblem(signer, certificates, anchors, [tstInfo.genTime, new Date()]);
  if (problem) throw new Error(problem);
  return { token, by: { url: withoutCredentials(url), genTime: tstInfo.genTime, tsaName: commonNameOf(signer) } };
}

/** The TimeStampToken of a TimeStampResp that grants the request, as the authority's own bytes. */
function grantedToken(answer: Uint8Array): Uint8Array {
  const schema = parseDer(answer, 'TimeStampResp');
  const response = new pkijs.TimeStampResp({ schema });
  const status = response.status.status;
  // granted(0) or grantedWithMods(1); rejection(2), waiting(3) and the rest give no token.
  if (status !== 0 && status !== 1) throw new Error(`refused the request (PKIStatus ${status})`);
  if (!response.timeStampToken) throw new Error('granted the request but sent no token');
  // Its own bytes, not pkijs's re-encoding: they are what its signature was made over.
  const token = (schema as asn1js.Sequence).valueBlock.value[1];
  return new Uint8Array(token.valueBeforeDecodeView);
}

/**
 * The TSTInfo of a token whose CMS signature checks: exactly one signer, found among the token's
 * certificates (certReq asked for it), its message-digest attribute over the TSTInfo, its signature
 * over the signed attributes.
 */
function checkedToken(token: Uint8Array) {
  const contentInfo = new pkijs.ContentInfo({ schema: parseDer(token, 'TimeStampToken') });
  if (contentInfo.contentType !== OID.signedData) throw new Error('the token is not a CMS SignedData');
  const signedData = new pkijs.SignedData({ schema: contentInfo.content });
  const { eContentType, eContent } = signedData.encapContentInfo;
  if (eContentType !== OID.tstInfo || !eContent) throw new Error('the token holds no TSTInfo');
  const tstInfoDer = new Uint8Array(eContent.getValue());
  const tstInfo = pkijs.TSTInfo.fromBER(tstInfoDer);
  if (signedData.signerInfos.length !== 1) throw new Error(`the token has ${signedData.signerInfos.length} signers, not one`);
  const [signerInfo] = signedData.signerInfos;
  const certificates = (signedData.certificates ?? [])
    .filter((certificate): certificate is pkijs.Certificate => certificate instanceof pkijs.Certificate)
    .map((certificate) => knownCertificate(certificate.toSchema().toBER(false)));
  const signer = certificates.find((certificate) => isSigner(certificate, signerInfo));
  if (!signer) throw new Error('the token does not include the authority certificate');
  const digest = DIGESTS[signerInfo.digestAlgorithm.algorithmId];
  if (!digest) throw new Error(`the token is signed with an unsupported digest ${signerInfo.digestAlgorithm.algorithmId}`);
  const attribute = (type: string) => signerInfo.signedAttrs?.attributes.find((candidate) => candidate.type === type)?.values[0];
  const contentType = attribute(OID.contentType);
  if (!(contentType instanceof asn1js.ObjectIdentifier) || contentType.valueBlock.toString() !== OID.tstInfo) {
    throw new Error('the token signs no TSTInfo content type');
  }
  const messageDigest = attribute(OID.messageDigest);
  const expected = crypto.createHash(digest).update(tstInfoDer).digest();
  if (!(messageDigest instanceof asn1js.OctetString) || !expected.equals(bytesOf(messageDigest))) {
    throw new Error('the token signature does not cover its TSTInfo (message-digest differs)');
  }
  const signedAttributes = new Uint8Array(signerInfo.signedAttrs!.encodedValue);
  if (!signatureChecks(signedAttributes, bytesOf(signerInfo.signature), signerInfo.signatureAlgorithm, signer.x509, digest)) {
    throw new Error('the token signature does not check with the authority certificate');
  }
  const named = essCertificateProblem(attribute(OID.signingCertificateV2), attribute(OID.signingCertificate), signer);
  if (named) throw new Error(named);
  return { tstInfo, signer, certificates };
}

/**
 * RFC 3161 §2.4.2 and RFC 5816: the signed attributes name the authority's certificate by its hash (ESS
 * signing-certificate-v2, or the SHA-1 signing-certificate), so that another certificate of the same key
 * cannot be put in its place. Why not, or undefined.
 */
function essCertificateProblem(v2: asn1js.AsnType | undefined, v1: asn1js.AsnType | undefined, signer: KnownCertificate): string | undefined {
  const attribute = v2 ?? v1;
  if (!attribute) return 'the token does not name its authority certificate (no ESS signing-certificate attribute)';
  // SigningCertificate(V2) ::= SEQUENCE { certs SEQUENCE OF ESSCertID(v2), ... }: the first names the signer.
  const certs = attribute instanceof asn1js.Sequence ? attribute.valueBlock.value[0] : undefined;
  const first = certs instanceof asn1js.Sequence ? certs.valueBlock.value[0] : undefined;
  const parts = first instanceof asn1js.Sequence ? first.valueBlock.value : [];
  // ESSCertIDv2 ::= SEQUENCE { hashAlgorithm DEFAULT sha256, certHash, ... }; ESSCertID ::= SEQUENCE { certHash (SHA-1), ... }
  const algorithm = v2 && parts[0] instanceof asn1js.Sequence ? new pkijs.AlgorithmIdentifier({ schema: parts[0] }).algorithmId : undefined;
  const hashed = algorithm ? parts[1] : parts[0];
  const digest = v2 ? (algorithm ? DIGESTS[algorithm] : 'sha256') : 'sha1';
  if (!digest || !(hashed instanceof asn1js.OctetString)) return 'the token names its authority certificate in a form not read here';
  const hash = crypto.createHash(digest).update(signer.x509.raw).digest();
  return hash.equals(bytesOf(hashed)) ? undefined : 'the token names another certificate than the one that signed it (ESS signing-certificate)';
}

/** Whether the certificate is the one a SignerInfo names, by issuer and serial or by key id. */
function isSigner({ pki }: KnownCertificate, signerInfo: pkijs.SignerInfo): boolean {
  if (signerInfo.sid instanceof pkijs.IssuerAndSerialNumber) {
    return pki.issuer.isEqual(signerInfo.sid.issuer) && pki.serialNumber.isEqual(signerInfo.sid.serialNumber);
  }
  const keyId = Buffer.from((signerInfo.sid as asn1js.OctetString).valueBlock.valueHexView);
  const subjectKeyId = pki.extensions?.find((extension) => extension.extnID === '2.5.29.14')?.parsedValue as asn1js.OctetString | undefined;
  return subjectKeyId !== undefined && keyId.equals(Buffer.from(subjectKeyId.valueBlock.valueHexView));
}

/** RFC 3161 §2.3: the authority's certificate is for timestamping (critically so), and valid when it stamped and now. */
function checkTsaCertificate({ pki }: KnownCertificate, genTime: Date) {
  const usage = extendedKeyUsage(pki);
  if (!usage?.usages.includes(OID.timeStamping)) throw new Error('the authority certificate is not for timestamping (no id-kp-timeStamping)');
  if (!usage.critical) throw new Error('the authority certificate has a non-critical extended key usage');
  if (!validAt(pki, genTime)) throw new Error(`the authority certificate was not valid at the token time ${genTime.toISOString()}`);
  if (!validAt(pki, new Date())) throw new Error('the authority certificate is not valid now');
}

/**
 * Why the certificate does not chain to a trust anchor, or undefined when it does: each issuer found
 * among the token's certificates and the anchors, a CA whose signature on the link checks and that is
 * valid at each of `times`, until an anchor.
 */
function chainProblem(leaf: KnownCertificate, pool: KnownCertificate[], anchors: KnownCertificate[], times: Date[]): string | undefined {
  const isAnchor = (certificate: KnownCertificate) => anchors.some((anchor) => anchor.x509.raw.equals(certificate.x509.raw));
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    if (isAnchor(current)) return undefined;
    const issuer = [...anchors, ...pool].find(
      (candidate) =>
        candidate.x509.ca &&
        !candidate.x509.raw.equals(current.x509.raw) &&
        current.x509.checkIssued(candidate.x509) &&
        current.x509.verify(candidate.x509.publicKey),
    );
    if (!issuer) return `the authority certificate does not chain to a trusted root (no issuer of ${current.x509.subject.replace(/\n/g, ', ')})`;
    if (!times.every((time) => validAt(issuer.pki, time))) return `the issuing CA ${issuer.x509.subject.replace(/\n/g, ', ')} is out of its validity`;
    current = issuer;
  }
  return 'the authority certificate chain is too long';
}

function commonNameOf({ x509 }: KnownCertificate): string {
  const cn = x509.subject.split('\n').find((part) => part.startsWith('CN='));
  return cn ? cn.slice(3) : x509.subject.replace(/\n/g, ', ');
}
