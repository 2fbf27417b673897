import type { Db } from '../../src/db';
import { newId } from '../../src/ids';

// Rows written straight to the tables, for tests that need a state the API cannot make quickly (a text
// waiting to be extracted, a request never started) or a schema before the latest migration. An account
// and its API key through the service: createTestAccount (./system.ts); a document through the API:
// uploadDocument (./documents.ts).

const DAY = 24 * 60 * 60 * 1000;

/** An account's row, with only the columns every migration since the first has. */
export const accountRow = (id = 'acct_1', email = 'owner@example.com') => ({ id, email, plan: 'pro' });

/** A ready document's row with `text` as its extracted text (migration and indexer tests). */
export const documentRow = (id: string, accountId: string, fileName: string, text: string | null) => ({
  id,
  account_id: accountId,
  file_name: fileName,
  file_size: 4,
  status: 'ready',
  page_count: 1,
  sha256: 'a'.repeat(64),
  body_text: text,
});

/**
 * A ready document whose stored PDF is `content`, its text not yet extracted. Both rows in one
 * transaction, as an upload stores them: a document never looks ready without its file. Answers its id.
 */
export async function insertDocument(db: Db, accountId: string, content: Buffer, fileName = 'agreement.pdf') {
  const id = newId('document');
  await db.transaction(async (trx) => {
    await trx('documents').insert({ id, account_id: accountId, file_name: fileName, file_size: content.length, status: 'ready', page_count: 1 });
    await trx('document_files').insert({ document_id: id, content });
  });
  return id;
}

/** A pending request of one signer ("Ada") holding `documentIds` in order (its signers' rows are the test's). */
export async function insertRequestRows(db: Db, { id, accountId, documentIds }: { id: string; accountId: string; documentIds: string[] }) {
  await db('signing_requests').insert({
    id,
    account_id: accountId,
    document_id: documentIds[0],
    title: 'Flat on Elm Street',
    signing_order: 'parallel',
    status: 'pending',
    expires_at: new Date(Date.now() + DAY),
    reminder_every_days: 0,
    original_sha256: 'a'.repeat(64),
    signer_text: 'Ada ada@example.com',
  });
  await db('signing_request_documents').insert(
    documentIds.map((documentId, index) => ({ signing_request_id: id, position: index + 1, document_id: documentId, original_sha256: 'a'.repeat(64) })),
  );
}
