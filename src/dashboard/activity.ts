import type { Db } from '../db';
import type { EventType } from '../domain/events';
import { toPage } from '../db/pagination';

type Data = Record<string, any>;

const quoted = (text: unknown) => `“${String(text ?? '')}”`;
const person = (data: Data) => (data.name ? `${data.name} <${data.email}>` : String(data.email ?? 'A signer'));

/** One line a person reads in the activity feed, from the event's own data. */
const summaries: Record<EventType, (data: Data) => string> = {
  'document.created': (data) => `Document ${quoted(data.fileName)} uploaded`,
  'document.updated': (data) => `Document ${quoted(data.fileName)} updated`,
  'document.deleted': (data) => `Document ${quoted(data.fileName)} deleted`,
  'document.signed': (data) => `Document ${quoted(data.fileName)} signed by all ${data.signatureCount} parties`,
  'document.archive_renewed': () => 'Archive timestamp of a sealed document renewed',
  'signing_request.created': (data) => `Signing request ${quoted(data.title)} sent to ${data.signers?.length ?? 0} signer(s)`,
  'signing_request.completed': (data) => `Signing request ${quoted(data.title)} completed`,
  'signing_request.cancelled': (data) => `Signing request cancelled${data.reason ? `: ${data.reason}` : ''}`,
  'signing_request.declined': () => 'Signing request declined',
  'signing_request.expired': () => 'Signing request expired unsigned',
  'signer.signed': (data) => `${person(data)} signed`,
  'signer.declined': (data) => `${person(data)} declined${data.reason ? `: ${data.reason}` : ''}`,
  'signer.notified': (data) => `${person(data)} was sent the signing link`,
  'signer.viewed': (data) => `${person(data)} opened the signing page`,
  'signer.approved': (data) => `${person(data)} approved`,
  'signer.verification_locked': (data) =>
    data.untilSenderActs
      ? `${person(data)} was locked out until reminded, after ${data.wrongTries} wrong codes`
      : `${person(data)} was locked out after ${data.wrongTries ?? 'five'} wrong codes`,
  'template.created': (data) => `Template ${quoted(data.name)} created`,
  'template.updated': (data) => `Template ${quoted(data.name)} updated`,
  'template.deleted': (data) => `Template ${quoted(data.name)} deleted`,
  'bulk_send.created': (data) => `Bulk send of ${data.rowCount} rows from template ${quoted(data.templateName)} started`,
  'bulk_send.completed': (data) => `Bulk send finished: ${data.sent} sent, ${data.failed} failed, ${data.cancelled} cancelled`,
};

export const summarizeEvent = (type: string, data: Data) => (summaries[type as EventType] ?? (() => type))(data ?? {});

/** The account's events, newest first, a page at a time. */
export async function listActivity(db: Db, accountId: string, query: { limit: number; cursor?: string; type?: EventType }) {
  const rows: { id: string; type: string; data: Data; created_at: Date }[] = await db('events')
    .where('account_id', accountId)
    .modify((builder) => {
      if (query.type) builder.where('type', query.type);
      // The cursor is the last event's id; the page after it continues from that event's time.
      if (query.cursor) builder.whereRaw('(created_at, id) < (select created_at, id from events where id = ? and account_id = ?)', [query.cursor, accountId]);
    })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(query.limit + 1)
    .select('id', 'type', 'data', 'created_at');
  const page = toPage(rows, query.limit);
  return {
    data: page.data.map((event) => ({
      id: event.id,
      type: event.type,
      timestamp: event.created_at.toISOString(),
      summary: summarizeEvent(event.type, event.data),
      documentId: event.data?.documentId ?? null,
      signingRequestId: event.data?.signingRequestId ?? null,
      signerId: event.data?.signerId ?? null,
    })),
    pagination: { limit: query.limit, hasMore: page.hasMore, nextCursor: page.nextCursor },
  };
}
