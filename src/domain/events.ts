// What happened to what: the event types Signet records and sends to webhooks, and an event's shape.

/** Every event type Signet records; a webhook may subscribe to any of them. */
export const eventTypes = [
  'document.created',
  'document.signed',
  'document.archive_renewed',
  'signing_request.created',
  'signing_request.completed',
  'signer.signed',
  'signer.declined',
  'signer.notified',
  'signer.viewed',
  'signer.approved',
  'signer.verification_locked',
  'signing_request.cancelled',
  'signing_request.declined',
  'signing_request.expired',
  'document.updated',
  'document.deleted',
  'template.created',
  'template.updated',
  'template.deleted',
  'bulk_send.created',
  'bulk_send.completed',
] as const;
export type EventType = (typeof eventTypes)[number];

export interface SignetEvent {
  id: string;
  type: EventType;
  timestamp: string;
  data: Record<string, unknown>;
}
