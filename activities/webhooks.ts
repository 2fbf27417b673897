import type { Config } from '../src/config';
import type { Db } from '../src/db';
import type { MailTransport } from '../src/mail';
import { attemptDelivery, disableWebhook, prepareDeliveries, type DeliveryDeps } from '../src/webhooks/delivery';

export interface WebhookActivityDeps {
  db: Db;
  config: Pick<Config, 'MAIL_FROM'>;
  mail: MailTransport;
  delivery: DeliveryDeps;
}

// Each is safe to repeat: deliveries are unique per (webhook, event), an attempt is recorded in the
// transaction that updates its delivery, and the owner's e-mail is keyed by when the webhook was disabled.
export function createWebhookActivities({ db, config, mail, delivery }: WebhookActivityDeps) {
  return {
    prepareDeliveries: (eventId: string) => prepareDeliveries(db, eventId),

    attemptDelivery: (input: { deliveryId: string; nextDelayMs: number | null }) =>
      attemptDelivery(delivery, input.deliveryId, { nextDelayMs: input.nextDelayMs }),

    disableWebhook: (input: { webhookId: string; reason: 'gone' | 'failing' }) => disableWebhook({ db, mail, config }, input.webhookId, input.reason),
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
