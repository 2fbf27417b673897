// @ts-check
// The PKCS#7 (CMS) signatures of a PDF, checked: run in the PDF inspector's child processes
// (inspectPdf.mjs), never on the api's event loop, since the file and its signatures are anyone's.
// A signature's /ByteRange [a b c d] names the bytes it signs, file[a, a+b) and file[c, c+d); the gap
// between them must be exactly its /Contents, a hex string holding the DER of a CMS SignedData. The
// signature dictionary cannot sit in a compressed object stream (its offsets are file offsets), so the
// file's own bytes are searched. Node's crypto (OpenSSL) reads certificates and checks signatures;
// node-forge only walks the ASN.1.
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** @type {typeof import('node-forge')} */
const forge = require('node-forge');
const { asn1 } = forge;

/** More signatures than this in one file is a problem, not a verdict: each costs a hash of the file. */
export const MAX_SIGNATURES = 16;
/** The DER of one signature, at most (a signature with its chain and timestamps is some 10–30 KB). */
const MAX_SIGNATURE_BYTES = 512 * 1024;

const BYTE_RANGE = /\/ByteRange\s*\[\s*(\d{1,12})\s+(\d{1,12})\s+(\d{1,12})\s+(\d{1,12})\s*\]/g;
const HEX_STRING = /^<([0-9A-Fa-f\s]*)>$/;
/** A signature dictionary's /M, a PDF date: D:YYYYMMDDHHmmSS and its offset from UT (Z, or +HH'mm'). */
const CLAIMED_TIME = /\/M\s*\(D:(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:(Z)|([+-])(\d{2})'?(\d{2})'?)?\)/;

const OID = {
  signedData: '1.2.840.113549.1.7.2',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
};
/** Digest algorithms by OID, as Node names them. */
const DIGESTS = /** @type {Record<string, string>} */ ({
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
});

/**
 * @typedef {{ signer: string | null, signedAt: string | null, certificateFingerprint: string | null, intact: boolean,
 *   coversWholeFile: boolean }} PdfSignature
 */

/**
 * Every signature of the PDF in file order: who signed (the certificate's common name), when (its
 * signingTime, or else its dictionary's /M), the certificate's SHA-256 fingerprint (hex), whether it checks out over the bytes it
 * names (intact), and whether those are the whole file. Or the one problem that refuses the file.
 * @param {Buffer} bytes
 * @returns {{ signatures: PdfSignature[], problem?: undefined } | { problem: string, signatures?: undefined }}
 */
export function readSignatures(bytes) {
  const text = bytes.toString('latin1');
  /** @type {PdfSignature[]} */
  const signatures = [];
  const seen = new Set();
  for (const match of text.matchAll(BYTE_RANGE)) {
    const range = match.slice(1, 5).map(Number);
    const key = range.join(' ');
    if (seen.has(key)) continue;
    // Every byte range is counted, a signature's or not: each costs a look at its gap.
    if (seen.size === MAX_SIGNATURES) return { problem: `content holds more than ${MAX_SIGNATURES} signatures` };
    seen.add(key);
    const [start, firstLength, second, secondLength] = range;
    // A range that is not two stretches of this file around a gap is no signature's.
    if (start !== 0 || firstLength <= 0 || second <= firstLength || second + secondLength > bytes.length) continue;
    const gap = HEX_STRING.exec(text.slice(firstLength, second));
    if (!gap) continue;
    const der = Buffer.from(gap[1].replace(/\s/g, ''), 'hex');
    const signed = [bytes.subarray(0, firstLength), bytes.subarray(second, second + secondLength)];
    const checked = checkSignature(der.subarray(0, MAX_SIGNATURE_BYTES), signed);
    // A PAdES signature carries no signingTime: its claimed time is its dictionary's /M.
    const signedAt = checked.signedAt ?? (checked.signer === null ? null : claimedTime(text, match.index, second));
    signatures.push({ ...checked, signedAt, coversWholeFile: second + secondLength === bytes.length });
  }
  return { signatures };
}

/**
 * The /M of the signature dictionary around a /ByteRange (the indirect object that holds it), as ISO 8601.
 * @param {string} text the file
 * @param {number} byteRange where its /ByteRange is
 * @param {number} afterContents where the bytes after its /Contents begin
 */
function claimedTime(text, byteRange, afterContents) {
  const start = text.lastIndexOf(' obj', byteRange);
  const end = text.indexOf('endobj', afterContents);
  const dictionary = text.slice(start, end === -1 ? afterContents + 4096 : end).replace(/<[0-9A-Fa-f\s]*>/g, '<>');
  const found = CLAIMED_TIME.exec(dictionary);
  if (!found) return null;
  const [year, month, day, hour, minute, second, zulu, sign, offsetHours, offsetMinutes] = found.slice(1);
  const offset = zulu || !sign ? 'Z' : `${sign}${offsetHours}:${offsetMinutes ?? '00'}`;
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}${offset}`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/**
 * @param {Buffer} der the CMS ContentInfo (followed by the placeholder's zero padding)
 * @param {Buffer[]} signed the bytes it signs
 * @returns {Omit<PdfSignature, 'coversWholeFile'>}
 */
function checkSignature(der, signed) {
  const unreadable = { signer: null, signedAt: null, certificateFingerprint: null, intact: false };
  /** @type {import('node-forge').asn1.Asn1} */
  let contentInfo;
  try {
    // The options object is node-forge's own (its types know only the older `strict` flag): the zero padding
    // after the DER is no error.
    const options = /** @type {boolean} */ (/** @type {unknown} */ ({ parseAllBytes: false, decodeBitStrings: false }));
    contentInfo = asn1.fromDer(forge.util.createBuffer(der.toString('binary')), options);
  } catch {
    return unreadable;
  }
  const signedData = readSignedData(contentInfo);
  if (!signedData) return unreadable;
  const { certificates, signerInfo } = signedData;
  const certificate = findCertificate(certificates, signerInfo.issuer, signerInfo.serial);
  if (!certificate) return unreadable;
  const common = {
    signer: commonName(certificate) ?? certificate.subject,
    signedAt: signerInfo.signingTime ?? null,
    certificateFingerprint: certificate.fingerprint256.replaceAll(':', '').toLowerCase(),
  };
  return { ...common, intact: verifies(signerInfo, certificate, signed) };
}

/**
 * @typedef {{ issuer?: string, serial?: string, digest?: string, signedAttributes?: Buffer, messageDigest?: Buffer,
 *   signingTime?: string, signature: Buffer }} SignerInfo
 */

/**
 * The certificates and the first signer of a SignedData, or undefined for anything else.
 * @param {import('node-forge').asn1.Asn1} contentInfo
 * @returns {{ certificates: crypto.X509Certificate[], signerInfo: SignerInfo } | undefined}
 */
function readSignedData(contentInfo) {
  try {
    const [type, wrapped] = /** @type {import('node-forge').asn1.Asn1[]} */ (contentInfo.value);
    if (asn1.derToOid(/** @type {string} */ (type.value)) !== OID.signedData) return undefined;
    const fields = /** @type {import('node-forge').asn1.Asn1[]} */ (/** @type {import('node-forge').asn1.Asn1[]} */ (wrapped.value)[0].value);
    const certificateSet = fields.find((field) => field.tagClass === asn1.Class.CONTEXT_SPECIFIC && field.type === 0);
    const certificates = /** @type {import('node-forge').asn1.Asn1[]} */ (certificateSet?.value ?? []).flatMap((node) => {
      try {
        return [new crypto.X509Certificate(derOf(node))];
      } catch {
        return [];
      }
    });
    const signerInfos = fields[fields.length - 1];
    const first = /** @type {import('node-forge').asn1.Asn1[]} */ (signerInfos.value)[0];
    if (!first) return undefined;
    return { certificates, signerInfo: readSignerInfo(/** @type {import('node-forge').asn1.Asn1[]} */ (first.value)) };
  } catch {
    return undefined;
  }
}

/** @param {import('node-forge').asn1.Asn1} node */
const derOf = (node) => Buffer.from(asn1.toDer(node).getBytes(), 'binary');

/**
 * @param {import('node-forge').asn1.Asn1[]} fields version, sid, digestAlgorithm, [0] signedAttrs?, signatureAlgorithm, signature, [1]?
 * @returns {SignerInfo}
 */
function readSignerInfo(fields) {
  const [, sid, digestAlgorithm] = fields;
  /** @type {SignerInfo} */
  const info = { signature: Buffer.alloc(0) };
  if (sid.type === asn1.Type.SEQUENCE && sid.tagClass === asn1.Class.UNIVERSAL) {
    const [issuer, serial] = /** @type {import('node-forge').asn1.Asn1[]} */ (sid.value);
    info.issuer = derOf(issuer).toString('hex');
    info.serial = forge.util
      .bytesToHex(/** @type {string} */ (serial.value))
      .replace(/^(00)+(?=.)/, '')
      .toUpperCase();
  }
  const digestOid = asn1.derToOid(/** @type {string} */ (/** @type {import('node-forge').asn1.Asn1[]} */ (digestAlgorithm.value)[0].value));
  info.digest = DIGESTS[digestOid];
  let next = 3;
  const attributes = fields[next];
  if (attributes.tagClass === asn1.Class.CONTEXT_SPECIFIC && attributes.type === 0) {
    // What is signed is the attributes' DER as a SET OF, not as the [0] they are tagged with here.
    info.signedAttributes = derOf(asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, /** @type {import('node-forge').asn1.Asn1[]} */ (attributes.value)));
    for (const attribute of /** @type {import('node-forge').asn1.Asn1[]} */ (attributes.value)) {
      const [oid, values] = /** @type {import('node-forge').asn1.Asn1[]} */ (attribute.value);
      const value = /** @type {import('node-forge').asn1.Asn1[]} */ (values.value)[0];
      const name = asn1.derToOid(/** @type {string} */ (oid.value));
      if (name === OID.messageDigest) info.messageDigest = Buffer.from(/** @type {string} */ (value.value), 'binary');
      if (name === OID.signingTime) info.signingTime = readTime(value);
    }
    next++;
  }
  info.signature = Buffer.from(/** @type {string} */ (fields[next + 1].value), 'binary');
  return info;
}

/** @param {import('node-forge').asn1.Asn1} node a UTCTime or GeneralizedTime */
function readTime(node) {
  const text = /** @type {string} */ (node.value);
  const date = node.type === asn1.Type.UTCTIME ? asn1.utcTimeToDate(text) : asn1.generalizedTimeToDate(text);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * The certificate the signer info names (issuer and serial number), or the only one there is.
 * @param {crypto.X509Certificate[]} certificates
 * @param {string | undefined} issuer hex DER of the issuer's name
 * @param {string | undefined} serial upper-case hex
 */
function findCertificate(certificates, issuer, serial) {
  const named = certificates.find((certificate) => {
    const serialNumber = certificate.serialNumber.replace(/^(00)+(?=.)/, '').toUpperCase();
    return serialNumber === serial && issuerDer(certificate) === issuer;
  });
  return named ?? (certificates.length === 1 ? certificates[0] : undefined);
}

/** @param {crypto.X509Certificate} certificate */
function issuerDer(certificate) {
  try {
    // tbsCertificate: [0] version?, serialNumber, signature, issuer, …
    const tbs = /** @type {import('node-forge').asn1.Asn1[]} */ (
      /** @type {import('node-forge').asn1.Asn1[]} */ (asn1.fromDer(forge.util.createBuffer(certificate.raw.toString('binary'))).value)[0].value
    );
    const offset = tbs[0].tagClass === asn1.Class.CONTEXT_SPECIFIC ? 1 : 0;
    return derOf(tbs[offset + 2]).toString('hex');
  } catch {
    return undefined;
  }
}

/** @param {crypto.X509Certificate} certificate */
function commonName(certificate) {
  const line = certificate.subject.split('\n').find((part) => part.startsWith('CN='));
  return line?.slice(3);
}

/**
 * The digest of the signed bytes matches the signed attributes' messageDigest, and the signature over
 * those attributes (or over the bytes, without attributes) checks out with the certificate's key.
 * @param {SignerInfo} info
 * @param {crypto.X509Certificate} certificate
 * @param {Buffer[]} signed
 */
function verifies(info, certificate, signed) {
  if (!info.digest) return false;
  try {
    const hash = crypto.createHash(info.digest);
    for (const part of signed) hash.update(part);
    const digest = hash.digest();
    if (info.signedAttributes) {
      if (!info.messageDigest?.equals(digest)) return false;
      return crypto.verify(info.digest, info.signedAttributes, certificate.publicKey, info.signature);
    }
    return crypto.verify(info.digest, Buffer.concat(signed), certificate.publicKey, info.signature);
  } catch {
    return false;
  }
}
