// @ts-check
// The PKCS#7 (CMS) signatures of a PDF, checked: run in the PDF inspector's child processes
// (inspectPdf.mjs), never on the api's event loop, since the file and its signatures are anyone's.
// A signature's /ByteRange [a b c d] names the bytes it signs, file[a, a+b) and file[c, c+d); the gap
// between them must be exactly its /Contents, a hex string holding the DER of a CMS SignedData. The
// signature dictionary cannot sit in a compressed object stream (its offsets are file offsets), so the
// file's own bytes are searched. Node's crypto (OpenSSL) reads certificates and checks signatures;
// node-forge only walks the ASN.1.
// PAdES (ETSI EN 319 142-1) adds two RFC 3161 timestamps: a signature timestamp (B-T), a token over the
// signature value carried in the signature's unsigned attributes; and a document timestamp (B-LTA), a
// signature dictionary of its own whose /Contents is a token over its byte ranges. A token is itself a
// SignedData whose content is a TSTInfo: the time (genTime) and the hash it vouches for (messageImprint).
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** @type {typeof import('node-forge')} */
const forge = require('node-forge');
const { asn1 } = forge;
/** @typedef {import('node-forge').asn1.Asn1} Asn1 */

/** More signatures than this in one file is a problem, not a verdict: each costs a hash of the file. */
export const MAX_SIGNATURES = 16;
/** The DER of one signature, at most (a signature with its chain and timestamps is some 10–30 KB). */
const MAX_SIGNATURE_BYTES = 512 * 1024;
/** How far around its /Contents a signature dictionary's other entries are looked for. */
const MAX_DICTIONARY_BYTES = 8192;
/** `/DSS n g R` entries looked at, at most, for one inside the catalog. */
const MAX_DSS_ENTRIES = 64;

const BYTE_RANGE = /\/ByteRange\s*\[\s*(\d{1,12})\s+(\d{1,12})\s+(\d{1,12})\s+(\d{1,12})\s*\]/g;
const HEX_STRING = /^<([0-9A-Fa-f\s]*)>$/;
/** A signature dictionary's /M, a PDF date: D:YYYYMMDDHHmmSS and its offset from UT (Z, or +HH'mm'). */
const CLAIMED_TIME = /\/M\s*\(D:(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:(Z)|([+-])(\d{2})'?(\d{2})'?)?\)/;
const DOCUMENT_TIMESTAMP = /\/SubFilter\s*\/ETSI\.RFC3161(?![^\s/<>[\]()])/;
const DSS_ENTRY = /\/DSS\s*(?:\d+\s+\d+\s+R|<<)/;
const DSS_ENTRIES = new RegExp(DSS_ENTRY.source, 'g');
const ROOT = /\/Root\s+(\d{1,10})\s+(\d{1,5})\s+R/g;
const CATALOG = /\/Type\s*\/Catalog(?![^\s/<>[\]()])/;

const OID = {
  signedData: '1.2.840.113549.1.7.2',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  tstInfo: '1.2.840.113549.1.9.16.1.4', // id-ct-TSTInfo, RFC 3161
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14', // id-aa-signatureTimeStampToken
};
/** Digest algorithms by OID, as Node names them. */
const DIGESTS = /** @type {Record<string, string>} */ ({
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
});

/**
 * @typedef {{ time: string, authority: string | null, intact: boolean }} SignatureTimestamp
 * @typedef {{ kind: 'signature' | 'document_timestamp', signer: string | null, signedAt: string | null,
 *   certificateFingerprint: string | null, certificateNotAfter: string | null, intact: boolean, coversWholeFile: boolean,
 *   timestamp: SignatureTimestamp | null }} PdfSignature
 */

/**
 * Every signature of the PDF in file order: a signature or a document timestamp (kind), who signed (the
 * certificate's common name; a document timestamp's authority), when (its signingTime, or else its
 * dictionary's /M; a document timestamp's genTime), the certificate's SHA-256 fingerprint (hex) and end,
 * whether it checks out over the bytes it names (intact), whether those are the whole file, and a
 * signature's timestamp. And whether the file's catalog names a Document Security Store (validationData).
 * Or the one problem that refuses the file.
 * @param {Buffer} bytes
 * @returns {{ signatures: PdfSignature[], validationData: boolean, problem?: undefined } | { problem: string, signatures?: undefined, validationData?: undefined }}
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
    const dictionary = dictionaryAround(text, match.index, firstLength, second);
    const checked = checkContents(der.subarray(0, MAX_SIGNATURE_BYTES), signed, DOCUMENT_TIMESTAMP.test(dictionary));
    // A PAdES signature carries no signingTime: its claimed time is its dictionary's /M.
    const signedAt = checked.signedAt ?? (checked.signer === null ? null : claimedTime(dictionary));
    signatures.push({ ...checked, signedAt, coversWholeFile: second + secondLength === bytes.length });
  }
  return { signatures, validationData: signatures.length > 0 && namesDss(text) };
}

/**
 * The signature dictionary around a /ByteRange (from the indirect object that holds it to its endobj),
 * without its /Contents, within MAX_DICTIONARY_BYTES either side.
 * @param {string} text the file
 * @param {number} byteRange where its /ByteRange is
 * @param {number} contents where its /Contents begins
 * @param {number} afterContents where the bytes after its /Contents begin
 */
function dictionaryAround(text, byteRange, contents, afterContents) {
  const before = Math.min(byteRange, contents);
  const from = Math.max(0, before - MAX_DICTIONARY_BYTES);
  const start = from + Math.max(0, text.slice(from, before).lastIndexOf(' obj'));
  // The /ByteRange may come before /Contents or after it: the gap between is left out either way.
  return text.slice(start, contents) + objectAt(text, afterContents, Math.max(byteRange, afterContents) + MAX_DICTIONARY_BYTES);
}

/**
 * A signature dictionary's /M, as ISO 8601.
 * @param {string} dictionary
 */
function claimedTime(dictionary) {
  const found = CLAIMED_TIME.exec(dictionary);
  if (!found) return null;
  const [year, month, day, hour, minute, second, zulu, sign, offsetHours, offsetMinutes] = found.slice(1);
  const offset = zulu || !sign ? 'Z' : `${sign}${offsetHours}:${offsetMinutes ?? '00'}`;
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}${offset}`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/**
 * Whether the file's catalog names a Document Security Store: the catalog the last trailer (or
 * cross-reference stream) names, or any object of /Type /Catalog. Only objects written out in the file
 * are read, not those in compressed object streams (Signet's seals have none): a catalog there reads as
 * naming none. A file that fakes one only claims validation data anyone can look for.
 * @param {string} text the file
 */
function namesDss(text) {
  const root = lastMatch(text, ROOT);
  const catalog = root && lastMatch(text, new RegExp(`(?<![0-9])${root[1]}\\s+${root[2]}\\s+obj\\b`, 'g'));
  if (catalog && DSS_ENTRY.test(objectAt(text, catalog.index))) return true;
  let count = 0;
  for (const entry of text.matchAll(DSS_ENTRIES)) {
    if (++count > MAX_DSS_ENTRIES) break;
    const from = Math.max(0, entry.index - MAX_DICTIONARY_BYTES);
    const before = text.slice(from, entry.index);
    const start = before.lastIndexOf(' obj');
    if (start !== -1 && before.lastIndexOf('endobj') < start && CATALOG.test(objectAt(text, from + start))) return true;
  }
  return false;
}

/**
 * The last match of a global pattern.
 * @param {string} text
 * @param {RegExp} pattern
 */
function lastMatch(text, pattern) {
  let last;
  for (const match of text.matchAll(pattern)) last = match;
  return last;
}

/**
 * An indirect object's text from `at` to its endobj, looked for no further than `limit`.
 * @param {string} text
 * @param {number} at
 * @param {number} [limit]
 */
function objectAt(text, at, limit = at + MAX_DICTIONARY_BYTES) {
  const window = text.slice(at, limit);
  const end = window.indexOf('endobj');
  return end === -1 ? window : window.slice(0, end);
}

/** @typedef {Omit<PdfSignature, 'coversWholeFile'>} CheckedContents */

/**
 * A /Contents read: a document timestamp when its dictionary's SubFilter says so or its content is a
 * TSTInfo, else a signature.
 * @param {Buffer} der the CMS ContentInfo (followed by the placeholder's zero padding)
 * @param {Buffer[]} signed the bytes it signs
 * @param {boolean} saysTimestamp its dictionary's /SubFilter is ETSI.RFC3161
 * @returns {CheckedContents}
 */
function checkContents(der, signed, saysTimestamp) {
  const signedData = readSignedData(parseDer(der));
  /** @type {PdfSignature['kind']} */
  const kind = saysTimestamp || signedData?.contentType === OID.tstInfo ? 'document_timestamp' : 'signature';
  const unreadable = { kind, signer: null, signedAt: null, certificateFingerprint: null, certificateNotAfter: null, intact: false, timestamp: null };
  if (!signedData) return unreadable;
  if (kind === 'document_timestamp') {
    const token = readToken(signedData);
    if (!token) return unreadable;
    return { ...token.about, signedAt: token.genTime, intact: token.intact && imprintMatches(token, signed), timestamp: null, kind };
  }
  const { certificates, signerInfo } = signedData;
  const certificate = findCertificate(certificates, signerInfo.issuer, signerInfo.serial);
  if (!certificate) return unreadable;
  return {
    ...aboutCertificate(certificate),
    kind,
    signedAt: signerInfo.signingTime ?? null,
    intact: verifies(signerInfo, certificate, signed),
    timestamp: signerInfo.timestampToken ? signatureTimestamp(signerInfo.timestampToken, signerInfo.signature) : null,
  };
}

/** @param {crypto.X509Certificate} certificate */
function aboutCertificate(certificate) {
  const notAfter = new Date(certificate.validTo);
  return {
    signer: commonName(certificate) ?? certificate.subject,
    certificateFingerprint: certificate.fingerprint256.replaceAll(':', '').toLowerCase(),
    certificateNotAfter: Number.isNaN(notAfter.getTime()) ? null : notAfter.toISOString(),
  };
}

/**
 * A signature's signature timestamp: when, by whom, and whether it vouches for this signature value and
 * checks out; null when the token cannot be read.
 * @param {Asn1} token its ContentInfo
 * @param {Buffer} signatureValue the SignerInfo's signature
 * @returns {SignatureTimestamp | null}
 */
function signatureTimestamp(token, signatureValue) {
  const read = readToken(readSignedData(token));
  if (!read) return null;
  return { time: read.genTime, authority: read.about.signer, intact: read.intact && imprintMatches(read, [signatureValue]) };
}

/**
 * @typedef {{ about: ReturnType<typeof aboutCertificate>, genTime: string, imprintDigest: string | undefined,
 *   imprint: Buffer, intact: boolean }} Token
 */

/**
 * A timestamp token (a SignedData of a TSTInfo): its authority's certificate, its time and imprint, and
 * whether its own signature checks out (the message digest over the TSTInfo, the signature over the
 * signed attributes). Undefined when it cannot be read.
 * @param {SignedData | undefined} signedData
 * @returns {Token | undefined}
 */
function readToken(signedData) {
  if (signedData?.contentType !== OID.tstInfo || !signedData.content) return undefined;
  const { certificates, signerInfo, content } = signedData;
  const certificate = findCertificate(certificates, signerInfo.issuer, signerInfo.serial);
  const tstInfo = readTstInfo(content);
  if (!certificate || !tstInfo) return undefined;
  return { about: aboutCertificate(certificate), ...tstInfo, intact: verifies(signerInfo, certificate, [content]) };
}

/**
 * TSTInfo: version, policy, messageImprint { hashAlgorithm, hashedMessage }, serialNumber, genTime, …
 * @param {Buffer} der
 */
function readTstInfo(der) {
  try {
    const [, , messageImprint, , genTime] = /** @type {Asn1[]} */ (parseDer(der)?.value);
    const [algorithm, hashed] = /** @type {Asn1[]} */ (messageImprint.value);
    const time = genTime.type === asn1.Type.GENERALIZEDTIME ? readTime(genTime) : undefined;
    if (!time) return undefined;
    return { imprintDigest: DIGESTS[oidOf(/** @type {Asn1[]} */ (algorithm.value)[0])], imprint: octetsOf(hashed), genTime: time };
  } catch {
    return undefined;
  }
}

/**
 * The token's imprint is the hash of these bytes, by the imprint's own algorithm.
 * @param {Pick<Token, 'imprintDigest' | 'imprint'>} token
 * @param {Buffer[]} parts
 */
function imprintMatches(token, parts) {
  if (!token.imprintDigest) return false;
  const hash = crypto.createHash(token.imprintDigest);
  for (const part of parts) hash.update(part);
  return hash.digest().equals(token.imprint);
}

/**
 * DER (or BER) bytes as ASN.1, or undefined.
 * @param {Buffer} der
 * @returns {Asn1 | undefined}
 */
function parseDer(der) {
  try {
    // The options object is node-forge's own (its types know only the older `strict` flag): the zero padding
    // after the DER is no error.
    const options = /** @type {boolean} */ (/** @type {unknown} */ ({ parseAllBytes: false, decodeBitStrings: false }));
    return asn1.fromDer(forge.util.createBuffer(der.toString('binary')), options);
  } catch {
    return undefined;
  }
}

/** @param {Asn1} node an OBJECT IDENTIFIER */
const oidOf = (node) => asn1.derToOid(/** @type {string} */ (node.value));

/**
 * An OCTET STRING's bytes, also one in BER's constructed form (its parts, one level deep).
 * @param {Asn1} node
 */
function octetsOf(node) {
  if (typeof node.value === 'string') return Buffer.from(node.value, 'binary');
  return Buffer.concat(/** @type {Asn1[]} */ (node.value).map((part) => Buffer.from(typeof part.value === 'string' ? part.value : '', 'binary')));
}

/**
 * @typedef {{ issuer?: string, serial?: string, digest?: string, signedAttributes?: Buffer, messageDigest?: Buffer,
 *   signingTime?: string, signature: Buffer, timestampToken?: Asn1 }} SignerInfo
 * @typedef {{ contentType: string | undefined, content: Buffer | undefined, certificates: crypto.X509Certificate[],
 *   signerInfo: SignerInfo }} SignedData
 */

/**
 * The content (type, and bytes when encapsulated), the certificates and the first signer of a
 * SignedData, or undefined for anything else.
 * @param {Asn1 | undefined} contentInfo
 * @returns {SignedData | undefined}
 */
function readSignedData(contentInfo) {
  try {
    const [type, wrapped] = /** @type {Asn1[]} */ (contentInfo?.value);
    if (oidOf(type) !== OID.signedData) return undefined;
    // version, digestAlgorithms, encapContentInfo { eContentType, [0] eContent? }, [0] certificates?, [1] crls?, signerInfos
    const fields = /** @type {Asn1[]} */ (/** @type {Asn1[]} */ (wrapped.value)[0].value);
    const [contentType, content] = /** @type {Asn1[]} */ (fields[2].value);
    const certificateSet = fields.find((field) => field.tagClass === asn1.Class.CONTEXT_SPECIFIC && field.type === 0);
    const certificates = /** @type {Asn1[]} */ (certificateSet?.value ?? []).flatMap((node) => {
      try {
        return [new crypto.X509Certificate(derOf(node))];
      } catch {
        return [];
      }
    });
    const signerInfos = fields[fields.length - 1];
    const first = /** @type {Asn1[]} */ (signerInfos.value)[0];
    if (!first) return undefined;
    return {
      contentType: oidOf(contentType),
      content: content ? octetsOf(/** @type {Asn1[]} */ (content.value)[0]) : undefined,
      certificates,
      signerInfo: readSignerInfo(/** @type {Asn1[]} */ (first.value)),
    };
  } catch {
    return undefined;
  }
}

/** @param {Asn1} node */
const derOf = (node) => Buffer.from(asn1.toDer(node).getBytes(), 'binary');

/**
 * @param {Asn1[]} fields version, sid, digestAlgorithm, [0] signedAttrs?, signatureAlgorithm, signature, [1]?
 * @returns {SignerInfo}
 */
function readSignerInfo(fields) {
  const [, sid, digestAlgorithm] = fields;
  /** @type {SignerInfo} */
  const info = { signature: Buffer.alloc(0) };
  if (sid.type === asn1.Type.SEQUENCE && sid.tagClass === asn1.Class.UNIVERSAL) {
    const [issuer, serial] = /** @type {Asn1[]} */ (sid.value);
    info.issuer = derOf(issuer).toString('hex');
    info.serial = forge.util
      .bytesToHex(/** @type {string} */ (serial.value))
      .replace(/^(00)+(?=.)/, '')
      .toUpperCase();
  }
  info.digest = DIGESTS[oidOf(/** @type {Asn1[]} */ (digestAlgorithm.value)[0])];
  let next = 3;
  const attributes = fields[next];
  if (attributes.tagClass === asn1.Class.CONTEXT_SPECIFIC && attributes.type === 0) {
    // What is signed is the attributes' DER as a SET OF, not as the [0] they are tagged with here.
    info.signedAttributes = derOf(asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, /** @type {Asn1[]} */ (attributes.value)));
    for (const attribute of /** @type {Asn1[]} */ (attributes.value)) {
      const [oid, values] = /** @type {Asn1[]} */ (attribute.value);
      const value = /** @type {Asn1[]} */ (values.value)[0];
      const name = oidOf(oid);
      if (name === OID.messageDigest) info.messageDigest = Buffer.from(/** @type {string} */ (value.value), 'binary');
      if (name === OID.signingTime) info.signingTime = readTime(value);
    }
    next++;
  }
  info.signature = Buffer.from(/** @type {string} */ (fields[next + 1].value), 'binary');
  const unsigned = fields[next + 2];
  if (unsigned?.tagClass === asn1.Class.CONTEXT_SPECIFIC && unsigned.type === 1) {
    const token = /** @type {Asn1[]} */ (unsigned.value).find((attribute) => oidOf(/** @type {Asn1[]} */ (attribute.value)[0]) === OID.signatureTimeStampToken);
    info.timestampToken = token && /** @type {Asn1[]} */ (/** @type {Asn1[]} */ (token.value)[1].value)[0];
  }
  return info;
}

/** @param {Asn1} node a UTCTime or GeneralizedTime */
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
    const tbs = /** @type {Asn1[]} */ (/** @type {Asn1[]} */ (asn1.fromDer(forge.util.createBuffer(certificate.raw.toString('binary'))).value)[0].value);
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
