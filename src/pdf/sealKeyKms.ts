import crypto from 'node:crypto';
import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import type { KmsKeySource, SealKey } from './sealKeySource';

// The seal key in AWS KMS (or a server that speaks its protocol): KMS signs the SHA-256 digest made
// here, the key never leaves it. Credentials come from the SDK's usual chain (AWS_ACCESS_KEY_ID…,
// a profile, the instance's role).

const ALGORITHM = 'RSASSA_PKCS1_V1_5_SHA_256';

export async function openKmsKey({ kms, certificates }: KmsKeySource): Promise<SealKey> {
  const certs = certificates.map((cert) => Buffer.from(cert));
  if (certs.length === 0) throw new Error('no seal certificate given for the KMS key');
  // Bounded: the SDK sets no request timeout, and a seal must not wait on KMS for ever.
  const client = new KMSClient({ region: kms.region, endpoint: kms.endpoint, requestHandler: { connectionTimeout: 5_000, requestTimeout: 15_000 } });
  const failed = (what: string) => (error: unknown) => {
    throw new Error(`${what} the KMS key ${kms.keyId} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
  };

  const { PublicKey, SigningAlgorithms } = await client.send(new GetPublicKeyCommand({ KeyId: kms.keyId })).catch(failed('reading the public key of'));
  if (!PublicKey) throw new Error(`KMS gave no public key for the key ${kms.keyId}`);
  if (SigningAlgorithms && !SigningAlgorithms.includes(ALGORITHM)) throw new Error(`the KMS key ${kms.keyId} does not sign with ${ALGORITHM}`);
  // A key that is not the certificate's would make seals no one can verify: refuse it now.
  const kmsKey = crypto.createPublicKey({ key: Buffer.from(PublicKey), format: 'der', type: 'spki' });
  if (!kmsKey.equals(new crypto.X509Certificate(certs[0]).publicKey))
    throw new Error(`the KMS key ${kms.keyId} does not match the seal certificate's public key`);

  const sign = async (data: Buffer): Promise<Buffer> => {
    const digest = crypto.createHash('sha256').update(data).digest();
    const { Signature } = await client
      .send(new SignCommand({ KeyId: kms.keyId, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: ALGORITHM }))
      .catch(failed('signing with'));
    if (!Signature) throw new Error(`KMS gave no signature for the key ${kms.keyId}`);
    return Buffer.from(Signature);
  };
  return { certificates: certs, sign };
}
