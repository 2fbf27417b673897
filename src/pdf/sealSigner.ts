import crypto from 'node:crypto';
import forge from 'node-forge';
import { Signer } from '@signpdf/utils';
import type { SealCertificate } from './sealCertificate';

// The PKCS#7 signature of a sealed PDF, as @signpdf/signer-p12 makes it, with two costs taken out:
// the PKCS#12 file is opened once per process, not once per seal, and the RSA signature is made by
// Node's crypto (OpenSSL) instead of node-forge's JavaScript. Together they were most of a seal's CPU.

interface OpenedCertificate {
  certificates: forge.pki.Certificate[];
  certificate: forge.pki.Certificate;
  key: crypto.KeyObject;
}

const opened = new Map<string, OpenedCertificate>();
// DER prefix of an RSASSA-PKCS1-v1_5 DigestInfo for SHA-256, before the 32-byte digest.
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

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

export class SealSigner extends Signer {
  private readonly opened: OpenedCertificate;

  constructor(certificate: SealCertificate) {
    super();
    this.opened = open(certificate);
  }

  async sign(pdfBuffer: Buffer, signingTime?: Date): Promise<Buffer> {
    const { certificates, certificate, key } = this.opened;
    const p7 = forge.pkcs7.createSignedData();
    p7.content = forge.util.createBuffer(pdfBuffer.toString('binary'));
    for (const cert of certificates) p7.addCertificate(cert);
    // forge builds the signed attributes and asks the key to sign their digest.
    const signingKey = {
      sign: (md: forge.md.MessageDigest) => {
        const digestInfo = Buffer.concat([SHA256_DIGEST_INFO, Buffer.from(md.digest().getBytes(), 'binary')]);
        return crypto.privateEncrypt({ key, padding: crypto.constants.RSA_PKCS1_PADDING }, digestInfo).toString('binary');
      },
    };
    p7.addSigner({
      key: signingKey as unknown as forge.pki.rsa.PrivateKey,
      certificate,
      digestAlgorithm: forge.pki.oids.sha256,
      // The order matters for EU signature validation (as in @signpdf/signer-p12).
      authenticatedAttributes: [
        { type: forge.pki.oids.contentType, value: forge.pki.oids.data },
        { type: forge.pki.oids.signingTime, value: (signingTime ?? new Date()) as unknown as string },
        { type: forge.pki.oids.messageDigest },
      ],
    });
    p7.sign({ detached: true });
    return Buffer.from(forge.asn1.toDer(p7.toAsn1()).getBytes(), 'binary');
  }
}

/** Hex SHA-256 of the seal certificate (DER): what a sealed PDF's signature names as its signer's. */
export function sealCertificateFingerprint(certificate: SealCertificate): string {
  const der = forge.asn1.toDer(forge.pki.certificateToAsn1(open(certificate).certificate)).getBytes();
  return crypto.createHash('sha256').update(Buffer.from(der, 'binary')).digest('hex');
}
