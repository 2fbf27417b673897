import { Client } from '@sendgrid/client';
import { MailService } from '@sendgrid/mail';
import type { MailTransport } from './message';

const requestTimeoutMs = 15_000;

/** SendGrid's v3 mail API. `apiUrl` replaces https://api.sendgrid.com (tests and proxies). */
export function createSendgridTransport(apiKey: string, apiUrl?: string): MailTransport {
  const client = new Client();
  client.setApiKey(apiKey); // also sets the regional base URL, so an override must come after it
  if (apiUrl) client.setDefaultRequest('baseUrl', apiUrl.replace(/\/$/, ''));
  const service = new MailService();
  service.setClient(client);
  service.setTimeout(requestTimeoutMs);
  return {
    name: 'sendgrid',
    async send(message) {
      const [response] = await service.send({
        to: { email: message.to, name: message.toName },
        from: { email: message.from, name: message.fromName },
        subject: message.subject,
        text: message.text,
        html: message.html,
        customArgs: { idempotency_key: message.idempotencyKey },
        headers: { 'X-Signet-Idempotency-Key': message.idempotencyKey },
        attachments: message.attachments?.map(({ filename, contentType, content }) => ({
          filename,
          type: contentType,
          content: content.toString('base64'),
          disposition: 'attachment',
        })),
      });
      const id = response.headers['x-message-id'];
      return { messageId: typeof id === 'string' && id ? id : message.idempotencyKey };
    },
  };
}
