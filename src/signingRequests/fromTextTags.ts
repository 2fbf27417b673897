import crypto from 'node:crypto';
import { withArticle } from '../domain/words';
import type { Account } from '../accounts/service';
import type { Db } from '../db';
import { MAX_FIELDS_PER_SIGNER, type RequestField, type SignerField, tagTextProblems } from '../documents/fields';
import { describeFieldProblem, signerFieldProblems } from '../documents/form';
import { createDocumentFromCopy, getDocumentFile, type Document } from '../documents/service';
import type { RecipientType } from '../domain/signingRequests';
import { AppError } from '../errors';
import type { EventLog } from '../events/service';
import { placedFieldOf, removeTagsIfAny, type TaggedField, type TextTagFinder } from '../pdf/textTags';
import type { TextTagUse } from './schema';
import { findTextTags, storeTextTags } from '../documents/store';

// Text tags ({{signature:client}}) are markup for Signet, never for signers: a request made on documents
// takes them out, making them its signers' fields (textTags: "fields") or not ("remove"), or is refused.

/** The text tags of one document of a request, and with textTags its PDF without them. */
export interface DocumentTags {
  fields: TaggedField[];
  pdf?: Uint8Array;
}

/** What a request made on documents gives: its documents, its signers (with a role for the tags), and what to do with tags. */
export interface TaggedRequestInput {
  document_id?: string;
  documents?: { document_id: string }[];
  textTags?: TextTagUse;
  signers: { role?: string; recipientType: RecipientType; fields?: RequestField[] }[];
}

const documentIdsOf = (input: TaggedRequestInput) => input.documents?.map((entry) => entry.document_id) ?? (input.document_id ? [input.document_id] : []);

/**
 * The text tags of each document of the request, by id, read before its transaction (pdf.js reads every
 * page, in child processes); with textTags, also each PDF without them. A document that is not the
 * account's, or has no PDF, is left to the transaction to refuse.
 */
export async function readRequestTextTags(db: Db, finder: TextTagFinder, accountId: string, input: TaggedRequestInput): Promise<Map<string, DocumentTags>> {
  const tags = new Map<string, DocumentTags>();
  for (const id of documentIdsOf(input)) {
    // Read once per document and kept: its file never changes. Only a copy without them reads the PDF again.
    const known = await findTextTags(db, accountId, id);
    if (known && (known.length === 0 || input.textTags === undefined)) {
      tags.set(id, { fields: known });
      continue;
    }
    const content = await getDocumentFile(db, accountId, id).then(
      (file) => file.content,
      (error) => {
        if (error instanceof AppError && (error.status === 404 || error.status === 409)) return undefined;
        throw error;
      },
    );
    if (!content) continue;
    const found: DocumentTags = input.textTags === undefined ? await finder.findTags(content) : await removeTagsIfAny(finder, content);
    if (!known) await storeTextTags(db, id, found.fields);
    tags.set(id, { fields: found.fields, pdf: found.pdf });
  }
  return tags;
}

const where = (field: TaggedField) => `${field.tag} on page ${field.page}`;
const listed = (fields: TaggedField[]) => `${fields.slice(0, 3).map(where).join(', ')}${fields.length > 3 ? `, and ${fields.length - 3} more` : ''}`;

/** The signer a tag's role names: the one with that role, or else (a number) the signer of that place, 1 the first. */
function signerNamed(role: string, signers: TaggedRequestInput['signers']): number {
  const byRole = signers.findIndex((signer) => signer.role === role);
  if (byRole >= 0) return byRole;
  return /^[1-9][0-9]{0,2}$/.test(role) && Number(role) <= signers.length ? Number(role) - 1 : -1;
}

/** The tags of the request's documents, each with the path that names its document in the request. */
function taggedDocuments(input: TaggedRequestInput, tags: Map<string, DocumentTags>) {
  return documentIdsOf(input).flatMap((id, index) => {
    const found = tags.get(id);
    if (!found || found.fields.length === 0) return [];
    const of = input.documents ? `documents.${index}` : undefined;
    return [{ id, at: of ? `${of}.document_id` : 'document_id', of, fields: found.fields }];
  });
}

/** Each signer's tags (textTags: "fields"), by the signer's position, with the document each is on and how a problem names it. */
function tagsBySigner(input: TaggedRequestInput, tags: Map<string, DocumentTags>) {
  const tagged = taggedDocuments(input, tags).flatMap(({ id, of, fields }) =>
    fields.map((field) => ({ id, field, name: `the field of tag ${field.tag} on page ${field.page}${of ? ` of ${of}` : ''}` })),
  );
  return input.signers.map((_, index) => tagged.filter(({ field }) => signerNamed(field.role, input.signers) === index));
}

/** A tag's field as its signer's, on the document it is printed on. */
const fieldOfTag = (field: TaggedField, documentId: string): SignerField => ({ documentId, ...placedFieldOf(field) });

/**
 * Each signer's fields as one form, its own and its tags' together (the schema checks a signer's own fields alone only
 * without textTags: "fields"): a tag's options and formula, and the labels a formula or a condition names, whichever
 * field it is on. Each tag's field is named by its tag.
 */
function taggedFormProblems(input: TaggedRequestInput, tags: Map<string, DocumentTags>): string[] {
  const bySigner = tagsBySigner(input, tags);
  return input.signers.flatMap((signer, index) => {
    const own = signer.fields ?? [];
    const tagged = bySigner[index];
    if (signer.recipientType !== 'signer') return [];
    const name = (position: number) => (position < own.length ? `signers.${index}.fields.${position}` : tagged[position - own.length].name);
    const fields = [...own, ...tagged.map(({ id, field }) => fieldOfTag(field, id))];
    return [
      ...tagged.flatMap(({ field, name: at }) => tagTextProblems(field, at)),
      ...signerFieldProblems(fields, name).map((problem) => describeFieldProblem(problem, name, `signers.${index}.fields`)),
    ];
  });
}

/**
 * Why the request cannot be sent as given: a document with tags and no textTags (signers would see them),
 * or, with textTags: "fields", a tag that names no signer or one who places nothing, a signer's role that
 * no tag names, a signer with more fields than a signer may have, or a form its own fields and its tags' cannot make.
 */
export function textTagProblems(input: TaggedRequestInput, tags: Map<string, DocumentTags>): string[] {
  const tagged = taggedDocuments(input, tags);
  if (input.textTags === undefined)
    return tagged.map(
      ({ at, fields }) =>
        `${at} names a PDF with text tags that its signers would see (${listed(fields)}): send it with textTags: "fields" to make them the signers' fields ` +
        `(a signer's role is the role its tags name, or a tag names its signer by number: {{signature:1}} is the first signer), ` +
        `with textTags: "remove" to take them out and place fields yourself, or make a template of it with detectFields: true`,
    );
  if (input.textTags !== 'fields') return [];
  const problems: string[] = [];
  const { signers } = input;
  signers.forEach((signer, index) => {
    const first = signers.findIndex((other) => other.role !== undefined && other.role === signer.role);
    if (signer.role !== undefined && first < index) problems.push(`signers.${index}.role must be unique: "${signer.role}" is also signers.${first}.role`);
  });
  const allFields = tagged.flatMap(({ at, fields }) => fields.map((field) => ({ at, field, signer: signerNamed(field.role, signers) })));
  const roles = [...new Set(allFields.map(({ field }) => field.role))];
  for (const role of roles) {
    const ofRole = allFields.filter(({ field }) => field.role === role);
    const index = ofRole[0].signer;
    const at = [...new Set(ofRole.map((tag) => tag.at))].join(', ');
    const list = listed(ofRole.map((tag) => tag.field));
    if (index < 0)
      problems.push(
        `${at} has text tags of the role "${role}" (${list}), which is no signer's: give their signer role: "${role}", or name the signer by number in the tags ({{signature:1}} is the first signer)`,
      );
    else if (signers[index].recipientType !== 'signer')
      problems.push(
        `${at} has text tags of the role "${role}" (${list}), which names signers.${index}, ${withArticle(signers[index].recipientType)}: only a signer has fields`,
      );
  }
  signers.forEach((signer, index) => {
    if (signer.role !== undefined && !allFields.some((tag) => tag.signer === index))
      problems.push(`signers.${index}.role must be the role of text tags in the documents: no tag names "${signer.role}"`);
    const count = (signer.fields?.length ?? 0) + allFields.filter((tag) => tag.signer === index).length;
    if (count > MAX_FIELDS_PER_SIGNER)
      problems.push(`signers.${index}.fields must have at most ${MAX_FIELDS_PER_SIGNER} items, those of its text tags included: it has ${count}`);
  });
  return [...problems, ...taggedFormProblems(input, tags)];
}

/**
 * A copy of each document of the request that has tags, without them, in the request's transaction: a new
 * document, counted against the monthly quota as a template's requests are, by the original's id. Call
 * after textTagProblems found none.
 */
export async function copiesWithoutTags(
  trx: Db,
  events: EventLog,
  account: Account,
  documents: { document: Document; pageSizes: [number, number][] }[],
  tags: Map<string, DocumentTags>,
): Promise<Map<string, Document>> {
  const copies = new Map<string, Document>();
  for (const { document, pageSizes } of documents) {
    const found = tags.get(document.id);
    if (!found?.pdf || found.fields.length === 0) continue;
    const content = Buffer.from(found.pdf);
    const sha256 = crypto.createHash('sha256').update(content).digest('hex');
    copies.set(document.id, await createDocumentFromCopy(trx, events, account, { fileName: document.fileName, content, pageSizes, sha256 }));
  }
  return copies;
}

/** Each signer's fields from the tags that name it (textTags: "fields"), on the document each tag is on (its copy's id from `idOf`), after its own. */
export function withTaggedFields<Signer extends { fields?: SignerField[] }>(
  input: TaggedRequestInput,
  tags: Map<string, DocumentTags>,
  signers: Signer[],
  idOf: (documentId: string) => string,
): Signer[] {
  if (input.textTags !== 'fields') return signers;
  const bySigner = tagsBySigner(input, tags);
  return signers.map((signer, index) => {
    const own = bySigner[index];
    if (own.length === 0) return signer;
    return { ...signer, fields: [...(signer.fields ?? []), ...own.map(({ id, field }) => fieldOfTag(field, idOf(id)))] };
  });
}
