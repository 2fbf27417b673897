import crypto from 'node:crypto';
import forge from 'node-forge';
import { Signer } from '@signpdf/utils';
import type { SealSummary } from './certificatePage';
import type { SealCertificate } from './sealCertificate';

// The CAdES signature of a sealed PDF, as PAdES baseline B-B asks (ETSI EN 319 142-1): a detached CMS
// SignedData whose signed attributes are content-type, message-digest and signing-certificate-v2, and
// no signing-time (the claimed time is the signature dictionary's /M). node-forge's pkcs7 cannot carry
// signing-certificate-v2, so the CMS is written here with forge's ASN.1 module. The PKCS#12 file is
// opened once per process, and the RSA signature is made by Node's crypto (OpenSSL).

interface OpenedCertificate {
  certificates: forge.pki.Certificate[];
  certificate: forge.pki.Certificate;
  key: crypto.KeyObject;
}

const opened = new Map<string, OpenedCertificate>();
const { asn1 } = forge;
const OID = {
  data: forge.pki.oids.data,
  signedData: forge.pki.oids.signedData,
  contentType: forge.pki.oids.contentType,
  messageDigest: forge.pki.oids.messageDigest,
  sha256: forge.pki.oids.sha256,
  rsaEncryption: forge.pki.oids.rsaEncryption,
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47', // id-aa-signingCertificateV2, RFC 5035
};

function open({ p12, password }: SealCertificate): OpenedCertificate {
  const id = crypto.createHash('sha256').update(p12).update('\0').update(password).digest('hex');
  const known = opened.get(id);
  if (known) return known;
  const parsed = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(forge.util.createBuffer(p12.toString('binary'))), false, password);
  const certificates = (parsed.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? []).map((bag) => bag.cert!).filter(Boolean);
  const privateKey = parsed.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag]?.[0]?.key as
    forge.pki.rsa.PrivateKey | undefined;
  if (!privateKey) throw new Error('the seal certificate file holds no private key');
  const rsaKey = (cert: forge.pki.Certificate) => cert.publicKey as forge.pki.rsa.PublicKey;
  const certificate = certificates.find((cert) => rsaKey(cert).n.compareTo(privateKey.n) === 0 && rsaKey(cert).e.compareTo(privateKey.e) === 0);
  if (!certificate) throw new Error('the seal certificate file holds no certificate that matches its private key');
  const key = crypto.createPrivateKey(forge.pki.privateKeyToPem(privateKey));
  const result = { certificates, certificate, key };
  opened.set(id, result);
  return result;
}

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
  private readonly opened: OpenedCertificate;

  constructor(certificate: SealCertificate) {
    super();
    this.opened = open(certificate);
  }

  async sign(pdfBuffer: Buffer): Promise<Buffer> {
    const { certificates, certificate, key } = this.opened;
    const attributes = signedAttributes(pdfBuffer, certificate);
    const signature = crypto.sign('sha256', der(set(...attributes)), key);
    const signerInfo = sequence(
      integer('01'),
      sequence(forge.pki.distinguishedNameToAsn1(certificate.issuer), integer(certificate.serialNumber)),
      algorithm(OID.sha256),
      asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, attributes), // [0] IMPLICIT SET OF Attribute
      algorithm(OID.rsaEncryption),
      octets(signature),
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
export function sealCertificateFingerprint(certificate: SealCertificate): string {
  return sha256(der(forge.pki.certificateToAsn1(open(certificate).certificate))).toString('hex');
}

/** Who the seal certificate names, who issued it, and whether it issued itself (no public trust store knows such a one). */
export function sealCertificateSummary(certificate: SealCertificate): SealSummary {
  const { certificate: cert } = open(certificate);
  const nameOf = (name: forge.pki.Certificate['subject']) =>
    (name.getField('CN')?.value as string | undefined) ?? name.attributes.map((part) => `${part.shortName ?? part.type}=${part.value}`).join(', ');
  return { subject: nameOf(cert.subject), issuer: nameOf(cert.issuer), selfSigned: cert.isIssuer(cert) };
}
