import crypto from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { RevocationProvider } from '@libpdf/core';
import {
  boundedFetch,
  bytesOf,
  certificateName,
  extendedKeyUsage,
  knownCertificate,
  parseDer,
  reason,
  SealServiceError,
  signatureChecks,
  uris,
  validAt,
  withoutCredentials,
  type KnownCertificate,
} from './sealServices';

// The revocation answers a B-LT seal embeds (OCSP, else a CRL), each checked before it is given to
// @libpdf/core: signed by whom it must be, about this certificate, current. A revoked certificate fails
// the seal outright. @libpdf/core swallows what a provider throws and goes on without the answer, so
// every refusal is also kept in `problems`, which the caller turns into a failed (retried) seal.

export interface RevocationSettings {
  timeoutMs: number;
  /** Default 5 MiB. */
  maxBytes?: number;
  /** DER: the seal chain, TSA chains and anchors, to find a CRL's issuer. */
  knownCertificates: Uint8Array[];
}

const OID = {
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  ocsp: '1.3.6.1.5.5.7.48.1',
  ocspBasic: '1.3.6.1.5.5.7.48.1.1',
  ocspNonce: '1.3.6.1.5.5.7.48.1.2',
  ocspSigning: '1.3.6.1.5.5.7.3.9',
  crlDistributionPoints: '2.5.29.31',
  authorityKeyIdentifier: '2.5.29.35',
  subjectKeyIdentifier: '2.5.29.14',
};
/** How far a responder's or a CA's clock may be ahead of or behind ours. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;
/** More certificates than this in one OCSP answer is no answer we look through. */
const MAX_RESPONSE_CERTIFICATES = 10;

/**
 * @libpdf/core's RevocationProvider. libpdf swallows what a provider throws, so every refusal is ALSO
 * recorded in `problems`; the caller fails the seal when it is not empty.
 */
export type CheckedRevocationProvider = RevocationProvider & {
  problems: SealServiceError[];
  /** Asks, all at once, for what libpdf will ask one after another: the answers wait in this provider for it. */
  prefetch(certificates: Uint8Array[]): Promise<void>;
};

export function checkedRevocationProvider(settings: RevocationSettings): CheckedRevocationProvider {
  const fetchSettings = { timeoutMs: settings.timeoutMs, maxBytes: settings.maxBytes ?? 5 * 1024 * 1024 };
  const problems: SealServiceError[] = [];
  // A CRL's issuer is found among the known certificates and the issuers libpdf named when it asked for
  // OCSP first (it always does where a chain has one): a third-party TSA's CA is known only that way.
  const known = new Map<string, KnownCertificate>();
  const know = (der: Uint8Array) => known.set(Buffer.from(der).toString('base64'), knownCertificate(der));
  let knownLoaded = false;
  /** The answer of `work`, or a SealServiceError, recorded, for whatever it threw. */
  const recorded = async (url: string, work: () => Promise<Uint8Array>) => {
    try {
      return await work();
    } catch (error) {
      const refusal = error instanceof SealServiceError ? error : new SealServiceError('revocation data', url, `${withoutCredentials(url)}: ${reason(error)}`);
      problems.push(refusal);
      throw refusal;
    }
  };
  // One answer per certificate and kind in a seal: libpdf asks again for the document timestamp's chain.
  const answers = new Map<string, Promise<Uint8Array | null>>();
  const once = (kind: string, cert: Uint8Array, ask: () => Promise<Uint8Array | null>) => {
    const key = `${kind}:${Buffer.from(cert).toString('base64')}`;
    if (!answers.has(key)) answers.set(key, ask());
    return answers.get(key)!;
  };
  const getOCSP = (cert: Uint8Array, issuer: Uint8Array) =>
    once('ocsp', cert, async () => {
      know(issuer);
      const certificate = knownCertificate(cert);
      const url = httpUris(accessLocations(certificate.pki))[0];
      if (!url) return null;
      return recorded(url, () => checkedOcsp(url, certificate, knownCertificate(issuer), fetchSettings));
    });
  const getCRL = (cert: Uint8Array) =>
    once('crl', cert, async () => {
      const certificate = knownCertificate(cert);
      const url = httpUris(distributionPoints(certificate.pki))[0];
      if (!url) return null;
      if (!knownLoaded) settings.knownCertificates.forEach(know);
      knownLoaded = true;
      const candidates = [...known.values()];
      return recorded(url, () => checkedCrl(url, certificate, candidates, fetchSettings));
    });
  return {
    problems,
    getOCSP,
    getCRL,
    async prefetch(certificates) {
      const pool = certificates.map((der) => ({ der, x509: knownCertificate(der).x509 }));
      const asks = pool.map(({ der, x509 }) => {
        const issuer = pool.find((candidate) => candidate.der !== der && x509.checkIssued(candidate.x509) && x509.verify(candidate.x509.publicKey));
        // As libpdf asks: OCSP where the certificate has an issuer and names a responder, else its CRL.
        const fromOcsp = issuer ? getOCSP(der, issuer.der) : Promise.resolve(null);
        return fromOcsp.then((answer) => answer ?? getCRL(der));
      });
      await Promise.allSettled(asks);
    },
  };
}

function httpUris(found: string[]): string[] {
  return found.filter((uri) => /^https?:\/\//i.test(uri));
}

function accessLocations(certificate: pkijs.Certificate): string[] {
  const extension = certificate.extensions?.find((candidate) => candidate.extnID === OID.authorityInfoAccess);
  const access = (extension?.parsedValue as pkijs.InfoAccess | undefined)?.accessDescriptions ?? [];
  return uris(access.filter((description) => description.accessMethod === OID.ocsp).map((description) => description.accessLocation));
}

function distributionPoints(certificate: pkijs.Certificate): string[] {
  const extension = certificate.extensions?.find((candidate) => candidate.extnID === OID.crlDistributionPoints);
  const points = (extension?.parsedValue as pkijs.CRLDistributionPoints | undefined)?.distributionPoints ?? [];
  return points.flatMap((point) => (Array.isArray(point.distributionPoint) ? uris(point.distributionPoint) : []));
}

/** The responder's OCSPResponse (its own bytes) when it says the certificate is good; throws otherwise. */
async function checkedOcsp(url: string, certificate: KnownCertificate, issuer: KnownCertificate, fetchSettings: { timeoutMs: number; maxBytes: number }) {
  const certID = new pkijs.CertID();
  await certID.createForCertificate(certificate.pki, { hashAlgorithm: 'SHA-1', issuerCertificate: issuer.pki });
  // The nonce's extnValue is an OCTET STRING holding the nonce's own OCTET STRING (RFC 8954).
  const nonce = new asn1js.OctetString({ valueHex: crypto.randomBytes(16) }).toBER(false);
  const request = new pkijs.OCSPRequest();
  request.tbsRequest.requestList = [new pkijs.Request({ reqCert: certID })];
  request.tbsRequest.requestExtensions = [new pkijs.Extension({ extnID: OID.ocspNonce, extnValue: nonce })];
  const answer = await boundedFetch(url, {
    method: 'POST',
    body: new Uint8Array(request.toSchema(true).toBER(false)),
    headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' },
    ...fetchSettings,
  });
  const basic = basicResponse(answer);
  if (!signedByIssuerOrDelegate(basic, issuer)) throw new Error('the OCSP answer is not signed by the issuer or a responder it authorized');
  const single = basic.tbsResponseData.responses.find((response) => response.certID.isEqual(certID));
  if (!single) throw new Error(`the OCSP answer is not about ${certificateName(certificate.pki)}`);
  const echoed = basic.tbsResponseData.responseExtensions?.find((extension) => extension.extnID === OID.ocspNonce);
  // Some responders give no nonce (precomputed answers): then thisUpdate alone says how fresh it is.
  if (echoed && !Buffer.from(echoed.extnValue.valueBlock.valueHexView).equals(Buffer.from(nonce))) throw new Error('the OCSP answer carries another nonce');
  const staleness = currencyProblem(single.thisUpdate, single.nextUpdate);
  if (staleness) throw new Error(`the OCSP answer ${staleness}`);
  const status = single.certStatus as asn1js.BaseBlock;
  if (status.idBlock.tagNumber === 1) {
    const revokedAt = (status as asn1js.Constructed).valueBlock.value[0];
    throw revoked(url, certificate, revokedAt instanceof asn1js.GeneralizedTime ? revokedAt.toDate() : undefined);
  }
  if (status.idBlock.tagNumber !== 0) throw new Error(`the OCSP responder does not know ${certificateName(certificate.pki)}`);
  return answer;
}

/** The BasicOCSPResponse of a successful OCSPResponse. */
function basicResponse(answer: Uint8Array): pkijs.BasicOCSPResponse {
  const response = new pkijs.OCSPResponse({ schema: parseDer(answer, 'OCSPResponse') });
  const status = response.responseStatus.valueBlock.valueDec;
  if (status !== 0) throw new Error(`the OCSP responder refused the request (status ${status})`);
  if (response.responseBytes?.responseType !== OID.ocspBasic) throw new Error('the OCSP answer is not a basic OCSP response');
  return pkijs.BasicOCSPResponse.fromBER(new Uint8Array(response.responseBytes.response.valueBlock.valueHexView));
}

/**
 * RFC 6960 §4.2.2.2: the issuer signed the answer, or a responder certificate included in it that the
 * issuer signed, valid now and for OCSP signing.
 */
function signedByIssuerOrDelegate(basic: pkijs.BasicOCSPResponse, issuer: KnownCertificate): boolean {
  const tbs = basic.tbsResponseData.tbsView;
  const checks = (signer: KnownCertificate) => signatureChecks(tbs, bytesOf(basic.signature), basic.signatureAlgorithm, signer.x509);
  if (checks(issuer)) return true;
  const included = (basic.certs ?? []).slice(0, MAX_RESPONSE_CERTIFICATES).map((certificate) => knownCertificate(certificate.toSchema().toBER(false)));
  return included.some(
    (responder) =>
      responder.x509.checkIssued(issuer.x509) &&
      responder.x509.verify(issuer.x509.publicKey) &&
      validAt(responder.pki, new Date()) &&
      (extendedKeyUsage(responder.pki)?.usages.includes(OID.ocspSigning) ?? false) &&
      checks(responder),
  );
}

/** Why an answer made at thisUpdate, to be replaced at nextUpdate, is not current, or undefined. */
function currencyProblem(thisUpdate: Date, nextUpdate: Date | undefined): string | undefined {
  const now = Date.now();
  if (thisUpdate.getTime() > now + CLOCK_SKEW_MS) return `is dated in the future (${thisUpdate.toISOString()})`;
  if (nextUpdate && nextUpdate.getTime() < now - CLOCK_SKEW_MS) return `is out of date (next update was due ${nextUpdate.toISOString()})`;
  if (nextUpdate && nextUpdate < thisUpdate) return 'is due for an update before it was made';
  return undefined;
}

function revoked(url: string, certificate: KnownCertificate, date: Date | undefined): SealServiceError {
  const on = date && !Number.isNaN(date.getTime()) ? date.toISOString() : 'an unknown date';
  return new SealServiceError('revocation data', url, `${certificateName(certificate.pki)} was revoked on ${on}`);
}

/** The CRL (its own bytes) when it is the issuer's, current and does not list the certificate; throws otherwise. */
async function checkedCrl(url: string, certificate: KnownCertificate, known: KnownCertificate[], fetchSettings: { timeoutMs: number; maxBytes: number }) {
  const answer = await boundedFetch(url, { method: 'GET', headers: { accept: 'application/pkix-crl' }, ...fetchSettings });
  const crl = new pkijs.CertificateRevocationList({ schema: parseDer(answer, 'CRL') });
  // Only a CRL of the certificate's own issuer speaks for it (indirect CRLs are not followed).
  if (!crl.issuer.isEqual(certificate.pki.issuer)) throw new Error('the CRL is not of the certificate issuer');
  const issuers = known.filter((candidate) => candidate.pki.subject.isEqual(crl.issuer) && keyIdMatches(crl, candidate.pki));
  if (issuers.length === 0) throw new Error('the CRL issuer is not among the known certificates');
  const signature = bytesOf(crl.signatureValue);
  if (!issuers.some((issuer) => signatureChecks(crl.tbsView, signature, crl.signature, issuer.x509))) {
    throw new Error('the CRL signature does not check with its issuer certificate');
  }
  const staleness = currencyProblem(crl.thisUpdate.value, crl.nextUpdate?.value);
  if (staleness) throw new Error(`the CRL ${staleness}`);
  const entry = crl.revokedCertificates?.find((revokedCertificate) => revokedCertificate.userCertificate.isEqual(certificate.pki.serialNumber));
  if (entry) throw revoked(url, certificate, entry.revocationDate.value);
  return answer;
}

/** Whether the CRL's authority key identifier, when it has one, is the candidate's subject key identifier. */
function keyIdMatches(crl: pkijs.CertificateRevocationList, candidate: pkijs.Certificate): boolean {
  const authority = crl.crlExtensions?.extensions.find((extension) => extension.extnID === OID.authorityKeyIdentifier);
  const keyId = (authority?.parsedValue as pkijs.AuthorityKeyIdentifier | undefined)?.keyIdentifier;
  if (!keyId) return true;
  const subject = candidate.extensions?.find((extension) => extension.extnID === OID.subjectKeyIdentifier)?.parsedValue as asn1js.OctetString | undefined;
  return subject !== undefined && Buffer.from(subject.valueBlock.valueHexView).equals(Buffer.from(keyId.valueBlock.valueHexView));
}
