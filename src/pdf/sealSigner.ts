import crypto from 'node:crypto';
import forge from 'node-forge';
import { Signer } from '@signpdf/utils';
import type { TimestampAuthority } from '@libpdf/core';
import type { SealSummary } from './certificatePage';
import { openSealKey } from './sealKey';
import type { SealCertificate, SealKey } from './sealKeySource';

// The CAdES signature of a sealed PDF, as PAdES baseline B-B asks (ETSI EN 319 142-1): a detached CMS
// SignedData whose signed attributes are content-type, message-digest and signing-certificate-v2, and
// no signing-time (the claimed time is the signature dictionary's /M). node-forge's pkcs7 cannot carry
// signing-certificate-v2, so the CMS is written here with forge's ASN.1 module. The RSA signature is
// the seal key's (./sealKey.ts). With a timestamp authority (B-T and above), the signature value is
// timestamped and the token carried as the unsigned attribute signature-time-stamp (RFC 3161 annex A).

const { asn1 } = forge;
const OID = {
  data: forge.pki.oids.data,
  signedData: forge.pki.oids.signedData,
  contentType: forge.pki.oids.contentType,
  messageDigest: forge.pki.oids.messageDigest,
  sha256: forge.pki.oids.sha256,
  rsaEncryption: forge.pki.oids.rsaEncryption,
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47', // id-aa-signingCertificateV2, RFC 5035
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14', // id-aa-signatureTimeStampToken, RFC 3161
};

const der = (node: forge.asn1.Asn1) => Buffer.from(asn1.toDer(node).getBytes(), 'binary');
const binary = (bytes: Buffer) => bytes.toString('binary');
const sequence = (...value: forge.asn1.Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, value);
const set = (...value: forge.asn1.Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, value);
const oid = (value: string) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(value).getBytes());
const octets = (bytes: Buffer) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, binary(bytes));
const integer = (hex: string) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, forge.util.hexToBytes(hex));
const explicit = (tag: number, ...value: forge.asn1.Asn1[]) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, tag, true, value);
const algorithm = (id: string) => sequence(oid(id), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''));
const attribute = (type: string, value: forge.asn1.Asn1) => sequence(oid(type), set(value));
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest();

/** The signed attributes, DER-sorted as a SET OF must be (the signature covers their DER as a SET). */
function signedAttributes(content: Buffer, certificate: forge.pki.Certificate) {
  const issuer = forge.pki.distinguishedNameToAsn1(certificate.issuer);
  const serial = integer(certificate.serialNumber);
  // ESSCertIDv2 with SHA-256, the default hash, so its AlgorithmIdentifier is left out (RFC 5035).
  const essCertIdV2 = sequence(octets(sha256(der(forge.pki.certificateToAsn1(certificate)))), sequence(sequence(explicit(4, issuer)), serial));
  return [
    attribute(OID.contentType, oid(OID.data)),
    attribute(OID.messageDigest, octets(sha256(content))),
    attribute(OID.signingCertificateV2, sequence(sequence(essCertIdV2))),
  ].sort((a, b) => Buffer.compare(der(a), der(b)));
}

export class SealSigner extends Signer {
  /** The signature timestamp's token (DER), once signed with a timestamp authority. */
  timestampToken: Buffer | undefined;

  constructor(
    private readonly key: SealKey,
    private readonly timestamps?: TimestampAuthority,
  ) {
    super();
  }

  async sign(pdfBuffer: Buffer): Promise<Buffer> {
    const certificates = this.key.certificates.map((cert) => forge.pki.certificateFromAsn1(asn1.fromDer(binary(cert))));
    const [certificate] = certificates;
    const attributes = signedAttributes(pdfBuffer, certificate);
    const signature = await this.key.sign(der(set(...attributes)));
    this.timestampToken = this.timestamps && Buffer.from(await this.timestamps.timestamp(sha256(signature), 'SHA-256'));
    const unsigned = this.timestampToken ? [attribute(OID.signatureTimeStampToken, asn1.fromDer(binary(this.timestampToken)))] : [];
    const signerInfo = sequence(
      integer('01'),
      sequence(forge.pki.distinguishedNameToAsn1(certificate.issuer), integer(certificate.serialNumber)),
      algorithm(OID.sha256),
      asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, attributes), // [0] IMPLICIT SET OF Attribute
      algorithm(OID.rsaEncryption),
      octets(signature),
      ...(unsigned.length ? [asn1.create(asn1.Class.CONTEXT_SPECIFIC, 1, true, unsigned)] : []), // [1] IMPLICIT unsignedAttrs
    );
    const signedData = sequence(
      integer('01'),
      set(algorithm(OID.sha256)),
      sequence(oid(OID.data)), // detached: the content is the PDF's signed byte ranges
      asn1.create(
        asn1.Class.CONTEXT_SPECIFIC,
        0,
        true,
        certificates.map((cert) => forge.pki.certificateToAsn1(cert)),
      ),
      set(signerInfo),
    );
    return der(sequence(oid(OID.signedData), explicit(0, signedData)));
  }
}

/** Hex SHA-256 of the seal certificate (DER): what a sealed PDF's signature names as its signer's. */
export async function sealCertificateFingerprint(certificate: SealCertificate): Promise<string> {
  // A key on a token or in a KMS has its certificate beside it: no need to reach the key for it.
  const der = 'certificates' in certificate ? Buffer.from(certificate.certificates[0]) : (await openSealKey(certificate)).certificates[0];
  return sha256(der).toString('hex');
}

/** Who the seal certificate names, who issued it, and whether it issued itself (no public trust store knows such a one). */
export async function sealCertificateSummary(certificate: SealCertificate): Promise<Omit<SealSummary, 'level'>> {
  const cert = forge.pki.certificateFromAsn1(asn1.fromDer(binary((await openSealKey(certificate)).certificates[0])));
  const nameOf = (name: forge.pki.Certificate['subject']) =>
    (name.getField('CN')?.value as string | undefined) ?? name.attributes.map((part) => `${part.shortName ?? part.type}=${part.value}`).join(', ');
  return { subject: nameOf(cert.subject), issuer: nameOf(cert.issuer), selfSigned: cert.isIssuer(cert) };
}
