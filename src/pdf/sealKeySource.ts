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
