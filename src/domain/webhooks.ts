// The vocabulary of a webhook endpoint's queue: pure types, shared by the workflow that owns a queue and the api.

export type WebhookHealth = 'healthy' | 'failing' | 'disabled';

/** What an operator asks a webhook's workflow: how much waits, since when, and why the last attempt failed. */
export interface WebhookQueueStatus {
  health: WebhookHealth;
  backlog: number;
  oldestPendingAt: string | null;
  lastError: string | null;
}

/** How one attempt to deliver an event ended: counted by the metrics, decided by webhooks/delivery.ts. */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'gone';
