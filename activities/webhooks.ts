import { Context } from '@temporalio/activity';
import type { Config } from '../src/config';
import type { Db } from '../src/db';
import type { MailTransport } from '../src/mail';
import { countWebhookDelivery } from '../src/metrics';
import { disableWebhook, sendDueDeliveries, type DeliveryDeps } from '../src/webhooks/delivery';
import type { WebhookActivities } from '../workflows/activities';

export interface WebhookActivityDeps {
  db: Db;
  config: Pick<Config, 'MAIL_FROM'>;
  mail: MailTransport;
  delivery: DeliveryDeps;
}

// Each is safe to repeat: an attempt is recorded in the statement that moves its delivery's due time,
// and the owner's e-mail is keyed by when the webhook was disabled.
export function createWebhookActivities({ db, config, mail, delivery }: WebhookActivityDeps): WebhookActivities {
  return {
    // Heartbeats after each group: a batch to a slow endpoint outlasts the heartbeat timeout, and a
    // worker that dies mid-batch hands it on that soon.
    sendDueDeliveries: (input: { webhookId: string; retryScheduleMs: number[]; concurrency: number; limit: number }) =>
      sendDueDeliveries(delivery, input, countWebhookDelivery, () => Context.current().heartbeat()),

    disableWebhook: (input: { webhookId: string; reason: 'gone' | 'failing' }) => disableWebhook({ db, mail, config }, input.webhookId, input.reason),
  };
}
