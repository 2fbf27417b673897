import type { AttemptRow, DeliveryRow, WebhookRow } from './store';

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** Exactly the fields of a webhook that leave the service: never its secret, except where the route adds it. */
export function presentWebhook(webhook: WebhookRow) {
  return {
    id: webhook.id,
    url: webhook.url,
    description: webhook.description,
    events: webhook.events,
    enabled: webhook.enabled,
    disabledReason: webhook.disabled_reason,
    failingSince: iso(webhook.failing_since),
    createdAt: webhook.created_at.toISOString(),
    updatedAt: webhook.updated_at.toISOString(),
  };
}

export function presentDelivery(delivery: DeliveryRow) {
  return {
    id: delivery.id,
    webhookId: delivery.webhook_id,
    eventId: delivery.event_id,
    eventType: delivery.event_type,
    status: delivery.status,
    attempts: delivery.attempts,
    lastStatusCode: delivery.last_status_code,
    lastLatencyMs: delivery.last_latency_ms,
    lastResponseBody: delivery.last_response_body,
    lastError: delivery.last_error,
    nextRetryAt: iso(delivery.next_retry_at),
    createdAt: delivery.created_at.toISOString(),
    updatedAt: delivery.updated_at.toISOString(),
  };
}

export function presentDeliveryDetail(delivery: DeliveryRow, attempts: AttemptRow[]) {
  return {
    ...presentDelivery(delivery),
    requestBody: delivery.body,
    attemptLog: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      statusCode: attempt.status_code,
      latencyMs: attempt.latency_ms,
      responseBody: attempt.response_body,
      error: attempt.error,
      createdAt: attempt.created_at.toISOString(),
    })),
  };
}
