import { PDFDocument } from 'pdf-lib';
import { auditActionLabel } from '../domain/auditActions';
import type { SealLevel } from '../domain/signingRequests';
import { PageWriter } from './pageWriter';
import { formatTimestamp } from './stamp';

export interface CertificateSigner {
  name: string;
  email: string;
  /** signer (the default), approver, viewer or cc. */
  recipientType?: string;
  approvedAt?: Date;
  ipAddress?: string;
  userAgent?: string;
  viewedAt?: Date;
  signedAt?: Date;
  /** How the sender asked them to prove who they are, and whether they did. */
  verification?: { method: 'access_code' | 'email_code'; verified: boolean };
  /** The name they typed as their signature, when they typed one. */
  typedSignature?: string;
}

// Letter case and spacing do not make another name; anything else does, and the certificate says which.
const plainName = (name: string) => name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLocaleLowerCase();
const signedAsOther = (signer: CertificateSigner) =>
  signer.typedSignature !== undefined && plainName(signer.typedSignature) !== plainName(signer.name) ? signer.typedSignature : undefined;

const verificationNames = { access_code: 'Access code', email_code: 'E-mail code' };

export interface CertificateEvent {
  at: Date;
  /** The audit step's action, shown by its label (see auditActionLabels). */
  type: string;
  /** Who or what caused it, e.g. an e-mail address or "system". */
  actor?: string;
}

export interface CertificateDocument {
  name: string;
  /** SHA-256 of the document as it was sent. */
  sha256: string;
  pageCount?: number;
}

/** The seal the certificate is sealed with, as the page describes it. */
export interface SealSummary {
  subject: string;
  issuer: string;
  selfSigned: boolean;
  /** The PAdES baseline level the seal is made at. */
  level: SealLevel;
}

export interface CertificateInfo {
  requestId: string;
  title: string;
  /** Who sent the request, as the audit trail names them (a member, or an API key and its member). */
  sentBy?: string;
  /** The document this certificate is appended to. */
  document: CertificateDocument;
  /** Every document of the request, in order (this one among them). */
  documents: CertificateDocument[];
  events: CertificateEvent[];
  signers: CertificateSigner[];
  /** The files signers uploaded for their image and attachment fields, in every document of the request. */
  uploads?: CertificateUpload[];
  seal?: SealSummary;
}

export interface CertificateUpload {
  /** Who uploaded it: the signer's e-mail address. */
  signer: string;
  /** The field's label, if it has one. */
  field: string | null;
  kind: 'image' | 'attachment';
  fileName: string;
  size: number;
  sha256: string;
}

/** Appends the certificate of completion, flowing onto further pages when the signers or events need them. */
export async function appendCertificatePage(pdf: PDFDocument, info: CertificateInfo): Promise<void> {
  const writer = await PageWriter.start(pdf, 'Certificate of completion');
  await writer.field('Request', info.requestId);
  await writer.field('Title', info.title);
  if (info.sentBy) await writer.field('Sent by', info.sentBy);
  await writer.field('Document', info.document.name);
  await writer.field('Original SHA-256', info.document.sha256);
  if (info.documents.length > 1) {
    writer.space(12);
    await writer.line(`Documents of this request (${info.documents.length})`, { size: 13, face: 'bold' });
    for (const [index, document] of info.documents.entries()) {
      await writer.keepTogether(40);
      writer.space(6);
      await writer.field(`${index + 1}.`, `${document.name}${document.pageCount ? ` (${document.pageCount} page${document.pageCount === 1 ? '' : 's'})` : ''}`);
      await writer.field('SHA-256', document.sha256);
    }
  }

  writer.space(12);
  const onlySigners = info.signers.every((signer) => (signer.recipientType ?? 'signer') === 'signer');
  await writer.line(onlySigners ? 'Signers' : 'Recipients', { size: 13, face: 'bold' });
  for (const signer of info.signers) {
    const signedAs = signedAsOther(signer);
    await writer.keepTogether(80 + (signer.verification ? 12 : 0) + (signedAs ? 12 : 0));
    writer.space(6);
    await writer.field('Name', signer.name);
    if (signedAs) await writer.field('Signed as', `"${signedAs}" (the request named ${signer.name})`);
    await writer.field('E-mail', signer.email);
    if (!onlySigners) await writer.field('Recipient', signer.recipientType ?? 'signer');
    if (signer.ipAddress) await writer.field('IP address', signer.ipAddress);
    if (signer.userAgent) await writer.field('User agent', signer.userAgent);
    await writer.field('Viewed at', signer.viewedAt ? formatTimestamp(signer.viewedAt) : 'Not opened');
    if (signer.verification) {
      const name = verificationNames[signer.verification.method];
      await writer.field('Identity', signer.verification.verified ? `${name} verified` : `${name} asked for, not given`);
    }
    if (signer.approvedAt) await writer.field('Approved at', formatTimestamp(signer.approvedAt));
    else if (signer.recipientType !== 'viewer' && signer.recipientType !== 'cc')
      await writer.field('Signed at', signer.signedAt ? formatTimestamp(signer.signedAt) : 'Not signed');
  }

  if (info.uploads?.length) await uploadsSection(writer, info.uploads);

  writer.space(12);
  await writer.line('Events', { size: 13, face: 'bold' });
  for (const event of info.events) {
    await writer.line(`${formatTimestamp(event.at)}  ${auditActionLabel(event.type)}${event.actor ? `  ${event.actor}` : ''}`, { size: 9 });
  }

  if (info.seal) await sealSection(writer, info.seal);
}

/** Each file a signer uploaded, with its SHA-256: an attachment travels in this file, an image is drawn in it. */
async function uploadsSection(writer: PageWriter, uploads: CertificateUpload[]) {
  writer.space(12);
  await writer.line(`Files uploaded by signers (${uploads.length})`, { size: 13, face: 'bold' });
  for (const upload of uploads) {
    await writer.keepTogether(52);
    writer.space(6);
    const where = upload.kind === 'attachment' ? 'attached to this file' : 'drawn in its field';
    await writer.field('File', `${upload.fileName} (${upload.size} bytes, ${where})`);
    await writer.field('Uploaded by', `${upload.signer}${upload.field ? `, for "${upload.field}"` : ''}`);
    await writer.field('SHA-256', upload.sha256);
  }
}

// What the seal proves and what it does not, in words: a PAdES B-B seal carries no trusted timestamp, so
// its times are the server's own; a self-signed certificate is trusted by no one but who checks it. The
// page is written before the seal is made, so it names what the seal carries, not the timestamp's time.
async function sealSection(writer: PageWriter, seal: SealSummary) {
  await writer.keepTogether(80);
  writer.space(12);
  await writer.line('Seal', { size: 13, face: 'bold' });
  await writer.field('Signature', `PAdES baseline ${seal.level} (ETSI.CAdES.detached) over this whole file`);
  await writer.field(
    'Certificate',
    seal.selfSigned ? `${seal.subject}, self-signed: no public trust store knows it` : `${seal.subject}, issued by ${seal.issuer}`,
  );
  if (seal.level === 'B-B') {
    await writer.field('Times', "Signet's server clock, in UTC: no trusted timestamp authority vouches for them");
    return;
  }
  await writer.field('Times', "the events above: Signet's server clock, in UTC; the seal: a trusted RFC 3161 timestamp in its signature");
  if (seal.level !== 'B-T') {
    const archive = seal.level === 'B-LTA' ? ', and a document timestamp over them, renewed before it expires' : '';
    await writer.field('Validation data', `the certificates and revocation answers the seal needs, embedded in this file${archive}`);
  }
}
