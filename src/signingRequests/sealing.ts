import type { Config } from '../config';
import type { SealDocumentInput } from '../pdf/seal';
import { loadSealCertificate } from '../pdf/sealCertificate';
import { sealDocumentOnThread } from '../pdf/sealThread';

/** What is sealed of one document: its original bytes, the signatures stamped on it, and its certificate of completion. */
export type SealInput = Omit<SealDocumentInput, 'sealCertificate'>;

/** Seals one document of a completed request: the sealed PDF, and its SHA-256. */
export interface Sealer {
  seal(input: SealInput): Promise<{ pdf: Buffer; sha256: string }>;
}

/**
 * The seal: the signatures stamped, the certificate of completion appended, and the whole file signed
 * (PAdES baseline B-B) with the seal certificate (SEAL_P12_PATH, or one generated into DATA_DIR), on the seal thread.
 */
export function padesSealer(config: Pick<Config, 'dataDir' | 'SEAL_P12_PATH' | 'SEAL_P12_PASSWORD'>): Sealer {
  return {
    async seal(input) {
      const sealCertificate = await loadSealCertificate({ p12Path: config.SEAL_P12_PATH, p12Password: config.SEAL_P12_PASSWORD, dataDir: config.dataDir });
      return sealDocumentOnThread({ ...input, sealCertificate });
    },
  };
}
