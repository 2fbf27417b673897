import crypto from 'node:crypto';
import forge from 'node-forge';
import type { P12KeySource, SealCertificate, SealKey } from './sealKeySource';

// Opens the seal key wherever it lives (./sealKeySource.ts); only `sign` reaches a key on a token or in a KMS.

const opened = new Map<string, Promise<SealKey>>();

/** Opens a seal key once per process and source (a PKCS#12 file's key derivation takes a while; a token's session is kept). */
export function openSealKey(source: SealCertificate): Promise<SealKey> {
  const id = crypto
    .createHash('sha256')
    .update(JSON.stringify(source, (_key, value) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value)))
    .digest('hex');
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
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((match) =>
    Buffer.from(match[1].replace(/\s/g, ''), 'base64'),
  );
}
