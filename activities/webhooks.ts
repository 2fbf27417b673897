import { Context } from '@temporalio/activity';
import type { Config } from '../src/config';
import type { Db } from '../src/db';
import { createEventDispatcher } from '../src/events/dispatch';
import type { MailTransport } from '../src/mail';
import { attemptDelivery, disableWebhook, prepareDeliveries, type DeliveryDeps } from '../src/webhooks/delivery';

export interface WebhookActivityDeps {
  db: Db;
  config: Pick<Config, 'MAIL_FROM'>;
  mail: MailTransport;
  delivery: DeliveryDeps;
}

/** The dispatcher of the running activity: its worker's client and task queue. */
export function activityEventDispatcher(db: Db, retryScale: number) {
  const context = Context.current();
  return createEventDispatcher({
    client: context.client,
    taskQueue: context.info.taskQueue,
    db,
    retryScale,
    onError: (error, eventIds) => context.log.warn('event dispatch failed; the sweeper will retry', { error: String(error), eventIds }),
  });
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
