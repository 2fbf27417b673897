import crypto from 'node:crypto';
import forge from 'node-forge';

// Where the seal's private key lives, and the certificates that name it. A PKCS#12 file is opened in
// the process; with a PKCS#11 token (an HSM) or a cloud KMS the key never enters it: only `sign`
// reaches it. Every source is plain data, so that it crosses to the seal thread as it is.

/** A PKCS#12 file (modern AES, or legacy RC2/3DES) holding the key, its certificate and perhaps its chain. */
export interface P12KeySource {
  p12: Uint8Array;
  password: string;
  /** DER certificates of the chain above the seal certificate, when the file does not carry them. */
  chain?: Uint8Array[];
}

/** A key on a PKCS#11 token, found by the token's label and the key's label. */
export interface Pkcs11KeySource {
  pkcs11: { module: string; tokenLabel: string; pin: string; keyLabel: string };
  /** DER: the seal certificate, then its chain. */
  certificates: Uint8Array[];
}

/** An asymmetric RSA key in AWS KMS (or a server that speaks its protocol). */
export interface KmsKeySource {
  kms: { keyId: string; region: string; endpoint?: string };
  /** DER: the seal certificate, then its chain. */
  certificates: Uint8Array[];
}

export type SealCertificate = P12KeySource | Pkcs11KeySource | KmsKeySource;

/** The seal key, open: its certificates (the seal's first, then its chain, DER) and RSASSA-PKCS1-v1_5 SHA-256 signing. */
export interface SealKey {
  certificates: Buffer[];
  sign(data: Buffer): Promise<Buffer>;
}

const opened = new Map<string, Promise<SealKey>>();

/** Opens a seal key once per process and source (a PKCS#12 file's key derivation takes a while; a token's session is kept). */
export function openSealKey(source: SealCertificate): Promise<SealKey> {
  const id = crypto.createHash('sha256').update(JSON.stringify(source, (_key, value) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value))).digest('hex');
  let key = opened.get(id);
  if (!key) {
    key = openUncached(source);
    key.catch(() => opened.delete(id));
    opened.set(id, key);
  }
  return key;
}

async function openUncached(source: SealCertificate): Promise<SealKey> {
  // Loaded only when used (a native module; the AWS SDK), by require: on the seal thread run from the
  // sources, tsx compiles what require loads, while import() would go to Node's own loader.
  if ('pkcs11' in source) return (require('./sealKeyPkcs11') as typeof import('./sealKeyPkcs11.js')).openPkcs11Key(source);
  if ('kms' in source) return (require('./sealKeyKms') as typeof import('./sealKeyKms.js')).openKmsKey(source);
  return openP12(source);
}

function openP12({ p12, password, chain = [] }: P12KeySource): SealKey {
  const parsed = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(p12).toString('binary'))), false, password);
  const inFile = (parsed.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? []).map((bag) => bag.cert!).filter(Boolean);
  const keyBags = parsed.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag] ?? [];
  const privateKey = keyBags[0]?.key as forge.pki.rsa.PrivateKey | undefined;
  if (!privateKey) throw new Error('the seal certificate file holds no RSA private key');
  const rsaKey = (cert: forge.pki.Certificate) => cert.publicKey as forge.pki.rsa.PublicKey;
  const own = inFile.find((cert) => rsaKey(cert).n?.compareTo(privateKey.n) === 0 && rsaKey(cert).e.compareTo(privateKey.e) === 0);
  if (!own) throw new Error('the seal certificate file holds no certificate that matches its private key');
  const derOf = (cert: forge.pki.Certificate) => Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes(), 'binary');
  const others = inFile.filter((cert) => cert !== own).map(derOf);
  const certificates = uniqueDer([derOf(own), ...orderChain(derOf(own), [...others, ...chain.map((cert) => Buffer.from(cert))])]);
  const key = crypto.createPrivateKey(forge.pki.privateKeyToPem(privateKey));
  return { certificates, sign: async (data) => crypto.sign('sha256', data, key) };
}

/** The chain above `leaf`, issuer after issuer, from the certificates given (in any order); those not on its path are left out. */
export function orderChain(leaf: Buffer, candidates: Buffer[]): Buffer[] {
  const pool = candidates.map((der) => ({ der, cert: new crypto.X509Certificate(der) }));
  const chain: Buffer[] = [];
  let current = new crypto.X509Certificate(leaf);
  for (let step = 0; step < 10 && current.issuer !== current.subject; step++) {
    const issuer = pool.find(({ cert }) => current.checkIssued(cert) && current.verify(cert.publicKey));
    if (!issuer) break;
    chain.push(issuer.der);
    current = issuer.cert;
  }
  return chain;
}

function uniqueDer(certificates: Buffer[]): Buffer[] {
  const seen = new Set<string>();
  return certificates.filter((der) => !seen.has(der.toString('base64')) && Boolean(seen.add(der.toString('base64'))));
}

/** Every certificate of a PEM bundle, DER. */
export function certificatesOfPem(pem: string): Buffer[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((match) => Buffer.from(match[1].replace(/\s/g, ''), 'base64'));
}
