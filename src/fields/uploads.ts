// The value of an image or attachment field once the signer signed: the file they uploaded, as JSON. Read back
// here by everything that shows it (the API, webhooks, the sealed PDF). Pure code without Node.

/** An uploaded file as the signer, the owner and the sealed PDF see it. */
export interface UploadedFile {
  id: string;
  fileName: string;
  /** application/pdf, image/png or image/jpeg, read from the bytes. */
  contentType: string;
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
}

/** A stored image or attachment value read back; undefined for any other value. */
export function storedUploadOf(value: string | null | undefined): UploadedFile | undefined {
  if (!value?.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(value) as Partial<UploadedFile>;
    return typeof parsed.id === 'string' && typeof parsed.sha256 === 'string' && typeof parsed.fileName === 'string' ? (parsed as UploadedFile) : undefined;
  } catch {
    return undefined;
  }
}

/** The value to store: the file's facts, in a fixed order. */
export const storedUpload = ({ id, fileName, contentType, size, sha256 }: UploadedFile) => JSON.stringify({ id, fileName, contentType, size, sha256 });
