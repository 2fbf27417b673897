import { PDFDocument, PDFImage, PDFPage, rgb } from 'pdf-lib';
import { PageWriter } from './pageWriter';
import { type Face, TextFonts } from './textFonts';
import { signaturePng } from './signatureImage';
import { encodePng, readPng } from './pngImage';
import { PNG_LIMITS } from './signerFile';
import { selectionFieldTypes } from '../fields/types';
import { storedUploadOf } from '../fields/uploads';
import { undrawableTextProblem } from './drawableText';

export type SignatureMark = { type: 'typed'; value: string } | { type: 'drawn'; pngDataUrl: string };

export interface StampField {
  /** 1-based page number. */
  page: number;
  /** PDF points from the page's bottom-left corner. */
  x: number;
  y: number;
  width: number;
  height: number;
  type:
    | 'signature'
    | 'initials'
    | 'date'
    | 'checkbox'
    | (typeof VALUE_TYPES)[number]
    | (typeof selectionFieldTypes)[number]
    | 'staticText'
    | 'image'
    | 'attachment';
  /**
   * What the signer entered, the sender prefilled or the server computed: the text of a text or date field, 'true'
   * for a ticked checkbox, initials typed or drawn (a PNG data URL), a number, address or option as stored, a
   * selection as a JSON list of its options, an image's or attachment's upload as JSON (src/fields/uploads.ts).
   */
  value?: string | null;
  /** The field's label, named with an attachment it carries. */
  label?: string | null;
  /** A static text field's words, placed by the sender. */
  text?: string;
  /** Hidden by its condition: not drawn at all. */
  hidden?: boolean;
  /** A radio's or checkbox group's options, and with them one box per option, where an X marks each chosen. */
  options?: string[];
  optionBoxes?: { x: number; y: number; width: number; height: number }[];
}

// Fields whose stored value is drawn as it is, and those holding a JSON list of chosen options.
const VALUE_TYPES = ['text', 'number', 'email', 'phone', 'radio', 'dropdown', 'calculated', 'signerName', 'signerEmail'] as const;
const isValueType = (type: string): type is (typeof VALUE_TYPES)[number] => (VALUE_TYPES as readonly string[]).includes(type);
const isListType = (type: string): type is (typeof selectionFieldTypes)[number] => (selectionFieldTypes as readonly string[]).includes(type);

/** A selection's chosen options, from its JSON list; a value that is no list (stored by hand) is one option, drawn as it is rather than failing the seal. */
function chosenOf(value: string | null | undefined): string[] {
  if (!value) return [];
  try {
    const options: unknown = JSON.parse(value);
    return Array.isArray(options) ? options.map(String) : [value];
  } catch {
    return [value];
  }
}

/** A selection's options, as the sealed PDF lists them: "Pets, Parking". */
const listed = (value: string | null | undefined) => chosenOf(value).join(', ');

export interface SignatureStamp {
  signerName: string;
  signerEmail: string;
  signedAt: Date;
  signature: SignatureMark;
  fields?: StampField[];
}

/**
 * Draws each signer's signature into their fields, or, for signers without fields,
 * lists them on an appended "Signatures" page.
 */
export async function stampSignatures(original: Uint8Array, signatures: SignatureStamp[], files?: Map<string, Uint8Array>): Promise<Uint8Array> {
  const pdf = await PDFDocument.load(original, { updateMetadata: false });
  await stampSignaturesInto(pdf, signatures, files);
  return pdf.save({ useObjectStreams: false });
}

/**
 * Each signer's fields drawn on their pages. `files` are the bytes of the signers' uploads, by id: an image field's
 * is drawn in its box, an attachment's is carried in the file (an embedded file) and named in its box.
 */
export async function stampSignaturesInto(pdf: PDFDocument, signatures: SignatureStamp[], files = new Map<string, Uint8Array>()): Promise<void> {
  const fonts = TextFonts.of(pdf);
  const pages = pdf.getPages();
  const withoutFields: SignatureStamp[] = [];
  for (const stamp of signatures) {
    if (!stamp.fields?.length) {
      withoutFields.push(stamp);
      continue;
    }
    const signatureImage = stamp.signature.type === 'drawn' ? await embedSignatureImage(pdf, stamp.signature.pngDataUrl) : undefined;
    const initialsImages = new Map<string, PDFImage>(); // drawn initials, embedded once however many fields show them
    for (const field of stamp.fields) {
      const page = pages[field.page - 1];
      if (!page) throw new Error(`field on page ${field.page}, but the document has ${pages.length} pages`);
      if (field.type === 'image' || field.type === 'attachment') {
        if (!field.hidden) await stampUpload(pdf, page, field, stamp, files, fonts);
        continue;
      }
      const drawnInitials = field.type === 'initials' && field.value?.startsWith('data:') ? field.value : undefined;
      if (drawnInitials && !initialsImages.has(drawnInitials)) initialsImages.set(drawnInitials, await embedSignatureImage(pdf, drawnInitials));
      await drawField(page, field, stamp, drawnInitials ? initialsImages.get(drawnInitials) : signatureImage, fonts);
    }
  }
  if (withoutFields.length) await appendSignaturesPage(pdf, withoutFields);
}

function drawField(page: PDFPage, placed: StampField, stamp: SignatureStamp, image: PDFImage | undefined, fonts: TextFonts) {
  // Fields count from the page's bottom-left corner, the page's own coordinates from its MediaBox origin.
  const origin = page.getMediaBox();
  const field = { ...placed, x: placed.x + origin.x, y: placed.y + origin.y };
  const box = (text: string, face: Face) => drawTextInBox(page, field, text, face, fonts);
  if (field.hidden) return undefined;
  if (field.type === 'date') return box(field.value ?? formatDate(stamp.signedAt), 'regular');
  if (field.type === 'staticText') return box(field.text ?? '', 'regular');
  if (field.optionBoxes && field.options) return markChosen(page, field, origin, fonts);
  if (isValueType(field.type)) return box(field.value ?? '', 'regular');
  if (isListType(field.type)) return box(listed(field.value), 'regular');
  if (field.type === 'checkbox') return field.value === 'true' ? box('X', 'regular') : undefined;
  if (field.type === 'initials' && field.value && !field.value.startsWith('data:')) return box(field.value, 'italic');
  if (image) return drawImageInBox(page, field, image);
  const typed = stamp.signature.type === 'typed' ? stamp.signature.value : stamp.signerName;
  return box(field.type === 'initials' ? initialsOf(typed) : typed, 'italic');
}

/**
 * An image field's upload drawn in its box; an attachment's carried in the PDF as an embedded file, its box naming it
 * ("Attached: lease.pdf"). An optional field left empty draws nothing. The bytes were checked when they were uploaded
 * (src/pdf/signerFile.ts); a PNG is read again here, as drawn signatures are, before pdf-lib decodes it.
 */
async function stampUpload(pdf: PDFDocument, page: PDFPage, placed: StampField, stamp: SignatureStamp, files: Map<string, Uint8Array>, fonts: TextFonts) {
  const upload = storedUploadOf(placed.value);
  if (!upload) return;
  const given = files.get(upload.id);
  if (!given) throw new Error(`the upload ${upload.id} of a ${placed.type} field is missing`);
  // A copy of its own: pdf-lib's JPEG reader reads the view's whole buffer from its start, and a Buffer from
  // the database is a view into a larger one.
  const bytes = new Uint8Array(given);
  const origin = page.getMediaBox();
  const field = { ...placed, x: placed.x + origin.x, y: placed.y + origin.y };
  if (field.type === 'image') {
    const image = upload.contentType === 'image/jpeg' ? await pdf.embedJpg(bytes) : await pdf.embedPng(encodePng(readPng(Buffer.from(bytes), PNG_LIMITS)));
    drawImageInBox(page, field, image);
    return;
  }
  await pdf.attach(bytes, upload.fileName, {
    mimeType: upload.contentType,
    description: `Uploaded by ${stamp.signerName} <${stamp.signerEmail}>${placed.label ? ` for "${placed.label}"` : ''}; SHA-256 ${upload.sha256}`,
    creationDate: stamp.signedAt,
    modificationDate: stamp.signedAt,
  });
  await drawTextInBox(page, field, `Attached: ${upload.fileName}`, 'regular', fonts);
}

/** An X in the box of each option chosen (a radio's one, a group's list). */
async function markChosen(page: PDFPage, field: StampField, origin: { x: number; y: number }, fonts: TextFonts) {
  const chosen = isListType(field.type) ? chosenOf(field.value) : [field.value ?? ''];
  for (const [index, option] of field.options!.entries()) {
    const optionBox = field.optionBoxes![index];
    if (!optionBox || !chosen.includes(option)) continue;
    await drawTextInBox(page, { ...field, ...optionBox, x: optionBox.x + origin.x, y: optionBox.y + origin.y }, 'X', 'regular', fonts);
  }
}

/** The text on one line, as large as fits the box (at most 24pt), shortened when even 6pt is too wide. */
async function drawTextInBox(page: PDFPage, box: StampField, value: string, face: Face, fonts: TextFonts) {
  const style = await fonts.style(value, face);
  let characters = Array.from(value);
  const width = (size: number) => style.width(characters.join(''), size);
  let size = Math.min(24, (box.height * 0.8) / style.heightAtSize(1));
  while (size > 6 && width(size) > box.width) size -= 0.5;
  while (characters.length && width(size) > box.width) characters = characters.slice(0, -1);
  if (!characters.length || size <= 0) return;
  const y = box.y + (box.height - style.heightAtSize(size, { descender: false })) / 2;
  style.draw(page, characters.join(''), { x: box.x + 2, y, size, color: rgb(0.05, 0.1, 0.4) });
}

function drawImageInBox(page: PDFPage, box: StampField, image: PDFImage) {
  const scale = Math.min(box.width / image.width, box.height / image.height);
  const width = image.width * scale;
  const height = image.height * scale;
  page.drawImage(image, { x: box.x + (box.width - width) / 2, y: box.y + (box.height - height) / 2, width, height });
}

async function appendSignaturesPage(pdf: PDFDocument, signatures: SignatureStamp[]) {
  const writer = await PageWriter.start(pdf, 'Signatures');
  for (const stamp of signatures) {
    await writer.keepTogether(110);
    writer.space(10);
    if (stamp.signature.type === 'drawn') await writer.image(await embedSignatureImage(pdf, stamp.signature.pngDataUrl), 220, 60);
    else await writer.line(stamp.signature.value, { size: 22, face: 'italic' });
    writer.space(4);
    await writer.field('Name', stamp.signerName);
    await writer.field('E-mail', stamp.signerEmail);
    await writer.field('Signed at', formatTimestamp(stamp.signedAt));
  }
}

/** pdf-lib decodes only PNGs read and rebuilt by signaturePng: its own decoder can loop forever on a broken one. */
function embedSignatureImage(pdf: PDFDocument, dataUrl: string) {
  return pdf.embedPng(signaturePng(dataUrl));
}

function initialsOf(name: string) {
  return name
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => {
      const first = Array.from(word)[0];
      const upper = first.toUpperCase();
      return undrawableTextProblem(upper) ? first : upper; // an upper case no font has is not worth a [U+…]
    })
    .join('');
}

export function formatDate(date: Date) {
  return date.toISOString().slice(0, 10);
}

export function formatTimestamp(date: Date) {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
