import { expect } from 'chai';
import type { Db } from '../../src/db';
import { newId } from '../../src/ids';
import { uploadDocument } from './documents';
import type { Request } from './http';
import { eventually } from './signing';

// A fixture account for the search and dashboard contract: hundreds of documents and signing requests in
// every state over 14 months, written straight to PostgreSQL (the source of truth both backends read), plus
// a few real PDFs uploaded through the API so that their text is extracted as in production.

export const VOCABULARY = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
export const PEOPLE = Array.from({ length: 14 }, (_, i) => ({
  name: `Person ${VOCABULARY[i % 12]} ${i}`,
  email: `person${i}@example.${i % 3 === 0 ? 'org' : 'com'}`,
}));
export const REASONS = ['Wrong amount', 'Not authorised to sign', null];
const STATUSES = ['pending', 'completed', 'declined', 'cancelled', 'expired'] as const;
const DAY = 86_400_000;

export interface FixtureDocument {
  id: string;
  fileName: string;
  body: string | null;
  status: 'ready' | 'awaiting_file';
  createdAt: Date;
  deleted: boolean;
}
export interface FixtureSigner {
  email: string;
  name: string;
  status: string;
  declineReason: string | null;
}
export interface FixtureRequest {
  id: string;
  documentId: string;
  title: string;
  message: string | null;
  status: (typeof STATUSES)[number];
  createdAt: Date;
  completedAt: Date | null;
  signers: FixtureSigner[];
}

/** A small deterministic generator, so a failure can be reproduced. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
  return { next, pick };
}

/** An instant in the calendar month `monthsAgo` before this one (UTC), never in the future. */
function instantIn(rng: ReturnType<typeof random>, monthsAgo: number, now: Date) {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsAgo, 1);
  const end = Math.min(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsAgo + 1, 1), now.getTime() - 60_000);
  return new Date(Math.floor(start + rng.next() * Math.max(1, end - start)));
}

function signersFor(rng: ReturnType<typeof random>, status: FixtureRequest['status']): FixtureSigner[] {
  const count = 1 + Math.floor(rng.next() * 3);
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(Math.floor(rng.next() * PEOPLE.length));
  const people = [...chosen].map((index) => PEOPLE[index]);
  return people.map((person, index) => {
    let signerStatus: string;
    if (status === 'completed') signerStatus = 'signed';
    else if (status === 'declined') signerStatus = index === 0 ? 'declined' : rng.pick(['pending', 'notified', 'viewed', 'signed']);
    else if (status === 'pending') signerStatus = rng.pick(['pending', 'notified', 'viewed', 'signed']);
    else signerStatus = rng.pick(['notified', 'viewed']);
    return { ...person, status: signerStatus, declineReason: signerStatus === 'declined' ? rng.pick(REASONS) : null };
  });
}

/** Documents and requests of one account, written with multi-row inserts. */
export async function seedAccount(db: Db, accountId: string, options: { seed: number; documents: number; requests: number; now: Date; extraWord?: string }) {
  const rng = random(options.seed);
  const documents: FixtureDocument[] = Array.from({ length: options.documents }, (_, i) => {
    const status = i % 17 === 5 ? 'awaiting_file' : 'ready';
    const words = [rng.pick(VOCABULARY), rng.pick(VOCABULARY), rng.pick(VOCABULARY)];
    return {
      id: newId('document'),
      fileName: `${words[0]}-${words[1]}_${i}.pdf`,
      body: status === 'ready' ? `Fixture text ${words.join(' ')} ${options.extraWord ?? ''} number ${i}` : null,
      status,
      createdAt: instantIn(rng, Math.floor(rng.next() * 14), options.now),
      deleted: i % 23 === 7,
    };
  });
  await db.batchInsert(
    'documents',
    documents.map((document) => ({
      id: document.id,
      account_id: accountId,
      file_name: document.fileName,
      file_size: 1000,
      status: document.status,
      page_count: document.status === 'ready' ? 1 : null,
      sha256: document.status === 'ready' ? 'f'.repeat(64) : null,
      body_text: document.body,
      created_at: document.createdAt,
      updated_at: document.createdAt,
      deleted_at: document.deleted ? options.now : null,
    })),
    200,
  );
  const ready = documents.filter((document) => document.status === 'ready');
  const requests: FixtureRequest[] = Array.from({ length: options.requests }, (_, i) => {
    const status = STATUSES[i % STATUSES.length];
    const createdAt = instantIn(rng, Math.floor(rng.next() * 14), options.now);
    const finished = status !== 'pending';
    const completedAt = finished ? new Date(Math.min(createdAt.getTime() + Math.floor(rng.next() * 12 * DAY) + 3_600_000, options.now.getTime() - 1000)) : null;
    return {
      id: newId('signingRequest'),
      documentId: rng.pick(ready).id,
      title: `${rng.pick(VOCABULARY)} agreement ${i}`,
      message: i % 3 === 0 ? `Please review the ${rng.pick(VOCABULARY)} terms` : null,
      status,
      createdAt,
      completedAt,
      signers: signersFor(rng, status),
    };
  });
  await db.batchInsert(
    'signing_requests',
    requests.map((request) => ({
      id: request.id,
      account_id: accountId,
      document_id: request.documentId,
      title: request.title,
      message: request.message,
      signing_order: 'parallel',
      status: request.status,
      expires_at: new Date(request.createdAt.getTime() + 30 * DAY),
      reminder_every_days: 0,
      original_sha256: 'f'.repeat(64),
      signer_text: request.signers.map((signer) => `${signer.name} ${signer.email}`).join(' '),
      created_at: request.createdAt,
      updated_at: request.completedAt ?? request.createdAt,
      completed_at: request.completedAt,
      workflow_started_at: request.createdAt, // history, not work: the sweeper must not start workflows for them
    })),
    200,
  );
  await db.batchInsert(
    'signing_request_documents',
    requests.map((request) => ({ signing_request_id: request.id, position: 1, document_id: request.documentId, original_sha256: 'f'.repeat(64) })),
    500,
  );
  await db.batchInsert(
    'signers',
    requests.flatMap((request) =>
      request.signers.map((signer, index) => ({
        id: newId('signer'),
        signing_request_id: request.id,
        name: signer.name,
        email: signer.email,
        order: index + 1,
        status: signer.status,
        decline_reason: signer.declineReason,
        declined_at: signer.status === 'declined' ? request.completedAt : null,
      })),
    ),
    500,
  );
  return { documents, requests };
}

/** Real PDFs with known text, uploaded through the API; returns once the worker has extracted their text. */
export async function uploadKnownPdfs(request: Request, db: Db) {
  const upload = async (fileName: string, pages: string[]) => {
    const document = await uploadDocument(request, { fileName, pages });
    return {
      id: document.id,
      fileName,
      body: pages.join(' '),
      createdAt: new Date(document.createdAt),
      status: 'ready' as const,
      deleted: false,
    };
  };
  const known = {
    pageThree: await upload('master-services.pdf', [
      'Master services agreement',
      'Definitions and scope',
      'The zephyrine indemnity clause survives termination',
    ]),
    named: await upload('zephyrine-notes.pdf', ['Meeting notes of the steering group']),
    fox: await upload('fable.pdf', ['The quick brown fox jumps over the lazy dog']),
    scanned: await upload('scanned-contract.pdf', ['']),
  };
  const ids = Object.values(known).map((document) => document.id);
  await eventually(async () => expect(await db('documents').whereIn('id', ids).whereNotNull('body_text').pluck('id')).to.have.length(ids.length));
  return known;
}

/** Words as a reader would split them: letters and digits, lower-cased. Written apart from the service's own. */
export const wordsOf = (text: string | null) =>
  (text ?? '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/** percentile_cont: linear interpolation between the closest ranks. */
export function percentileCont(values: number[], fraction: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const position = fraction * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
}

/** A word no other text holds. */
export const uniqueWord = () => `zq${Array.from({ length: 10 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('')}`;
