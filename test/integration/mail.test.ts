import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { createMailTransport, mailSender, type MailMessage } from '../../src/mail';
import { messageIdFor } from '../../src/mail/smtp';
import { declinedMail, invitationMail } from '../../src/mail/templates';
import { startApp, testApp } from '../support/app';
import { client } from '../support/http';
import { createTestAccount, sharedSystem } from '../support/system';

const unique = () => Math.random().toString(36).slice(2);

function sampleMessage(overrides: Partial<MailMessage> = {}): MailMessage {
  const rendered = invitationMail({
    signerName: 'Ada Lovelace',
    sender: { name: 'Acme Ltd', email: 'owner@acme.example' },
    title: 'Consulting agreement',
    message: 'Please sign by Friday.',
    signingUrl: 'http://localhost:3000/sign/tok_123',
    expiresAt: new Date('2026-12-01T12:00:00Z'),
  });
  return {
    idempotencyKey: `test-${unique()}`,
    to: 'ada@example.com',
    toName: 'Ada Lovelace',
    ...mailSender({ MAIL_FROM: 'Signet <no-reply@signet.local>' }),
    ...rendered,
    attachments: [{ filename: 'signed.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.7 fake bytes \x00\xff') }],
    ...overrides,
  };
}

/** Starts a server on a free loopback port and returns the port. */
async function listen(server: http.Server) {
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('mail: SMTP transport', () => {
  let server: SMTPServer;
  let received: ParsedMail[];
  let envelopes: { from: string; to: string[] }[];
  let port: number;

  before(async () => {
    received = [];
    envelopes = [];
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((mail) => {
            received.push(mail);
            envelopes.push({
              from: String(session.envelope.mailFrom && session.envelope.mailFrom.address),
              to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            });
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.server.address() as AddressInfo).port;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers to, from, subject, both bodies, the attachment and a Message-ID derived from the idempotency key', async () => {
    const transport = createMailTransport({ SMTP_URL: `smtp://127.0.0.1:${port}` }, undefined as never);
    expect(transport.name).to.equal('smtp');
    const message = sampleMessage();
    const result = await transport.send(message);
    expect(result.messageId).to.equal(messageIdFor(message));
    expect(received).to.have.length(1);
    const mail = received[0];
    expect(envelopes[0]).to.deep.equal({ from: 'no-reply@signet.local', to: ['ada@example.com'] });
    expect(mail.to && !Array.isArray(mail.to) && mail.to.value[0]).to.deep.include({ address: 'ada@example.com', name: 'Ada Lovelace' });
    expect(mail.from?.value[0]).to.deep.include({ address: 'no-reply@signet.local', name: 'Signet' });
    expect(mail.subject).to.equal(message.subject);
    expect(mail.text?.trim()).to.equal(message.text.trim());
    expect(mail.html).to.equal(message.html);
    expect(mail.messageId).to.equal(messageIdFor(message));
    expect(mail.headers.get('x-signet-idempotency-key')).to.equal(message.idempotencyKey);
    expect(mail.attachments).to.have.length(1);
    expect(mail.attachments[0]).to.include({ filename: 'signed.pdf', contentType: 'application/pdf' });
    expect(Buffer.compare(mail.attachments[0].content, message.attachments![0].content)).to.equal(0);
  });

  it('a retried send carries the same Message-ID', async () => {
    const transport = createMailTransport({ SMTP_URL: `smtp://127.0.0.1:${port}` }, undefined as never);
    const message = sampleMessage();
    const first = await transport.send(message);
    const second = await transport.send(message);
    expect(second.messageId).to.equal(first.messageId);
    expect(received.slice(-2).map((mail) => mail.messageId)).to.deep.equal([first.messageId, first.messageId]);
  });
});

describe('mail: SendGrid transport', () => {
  let server: http.Server;
  let requests: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: any }[];
  let status: number;
  let apiUrl: string;

  before(async () => {
    requests = [];
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        requests.push({ method: request.method, url: request.url, headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') });
        response.writeHead(status, status === 202 ? { 'X-Message-Id': 'sg-message-1' } : { 'Content-Type': 'application/json' });
        response.end(status === 202 ? '' : JSON.stringify({ errors: [{ message: 'internal error' }] }));
      });
    });
    apiUrl = `http://127.0.0.1:${await listen(server)}`;
  });

  beforeEach(() => {
    requests.length = 0;
    status = 202;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('POSTs the v3 /v3/mail/send shape with the API key, both bodies, the attachment and the idempotency key', async () => {
    const transport = createMailTransport({ SENDGRID_API_KEY: 'SG.test-key', SENDGRID_API_URL: apiUrl, SMTP_URL: 'smtp://ignored' }, undefined as never);
    expect(transport.name).to.equal('sendgrid');
    const message = sampleMessage();
    const result = await transport.send(message);
    expect(result.messageId).to.equal('sg-message-1');
    expect(requests).to.have.length(1);
    const [request] = requests;
    expect(request.method).to.equal('POST');
    expect(request.url).to.equal('/v3/mail/send');
    expect(request.headers.authorization).to.equal('Bearer SG.test-key');
    expect(request.headers['content-type']).to.match(/^application\/json/);
    const body = request.body;
    expect(body.personalizations[0].to[0]).to.deep.include({ email: 'ada@example.com', name: 'Ada Lovelace' });
    expect(body.from).to.deep.include({ email: 'no-reply@signet.local', name: 'Signet' });
    expect(body.subject).to.equal(message.subject);
    expect(body.content).to.deep.equal([
      { type: 'text/plain', value: message.text },
      { type: 'text/html', value: message.html },
    ]);
    expect(body.attachments).to.have.length(1);
    expect(body.attachments[0]).to.include({ filename: 'signed.pdf', type: 'application/pdf' });
    expect(Buffer.compare(Buffer.from(body.attachments[0].content, 'base64'), message.attachments![0].content)).to.equal(0);
    expect(body.custom_args ?? body.personalizations[0].custom_args).to.deep.equal({ idempotency_key: message.idempotencyKey });
    expect(body.headers ?? body.personalizations[0].headers).to.deep.include({ 'X-Signet-Idempotency-Key': message.idempotencyKey });
  });

  it('rejects when SendGrid answers 500, so the activity is retried', async () => {
    status = 500;
    const transport = createMailTransport({ SENDGRID_API_KEY: 'SG.test-key', SENDGRID_API_URL: apiUrl }, undefined as never);
    let failure: unknown;
    await transport.send(sampleMessage()).catch((error) => (failure = error));
    expect(failure).to.be.instanceOf(Error);
    expect((failure as { code?: number }).code).to.equal(500);
    expect(requests).to.have.length(1);
  });
});

describe('mail: outbox and /dev/mail', () => {
  it('stores one row for two sends with the same idempotency key', async () => {
    const { db } = await createTestAccount();
    const transport = createMailTransport({}, db);
    expect(transport.name).to.equal('outbox');
    const message = sampleMessage({ subject: `Outbox ${unique()}` });
    const first = await transport.send(message);
    const second = await transport.send({ ...message, subject: 'a retry changes nothing' });
    expect(second.messageId).to.equal(first.messageId);
    const rows = await db('mail_outbox').where({ idempotency_key: message.idempotencyKey });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ subject: message.subject, to_address: '"Ada Lovelace" <ada@example.com>', from_address: '"Signet" <no-reply@signet.local>' });
    expect(rows[0].attachments[0]).to.include({ filename: 'signed.pdf', contentType: 'application/pdf', size: message.attachments![0].content.length });
  });

  it('GET /dev/mail lists the message, newest first, and /dev/mail/:id shows it with its signing link', async () => {
    const { db } = await createTestAccount();
    const system = await sharedSystem();
    const request = client(system.url!);
    const transport = createMailTransport({}, db);
    const older = sampleMessage({ subject: `Older <${unique()}>` });
    const newer = sampleMessage({ subject: `Newer <${unique()}>` });
    await transport.send(older);
    const { messageId } = await transport.send(newer);
    const id = messageId.replace('outbox-', '');

    const list = await request('GET', '/dev/mail');
    expect(list.status).to.equal(200);
    expect(list.headers.get('content-type')).to.match(/^text\/html/);
    const escapedNewer = newer.subject.replace('<', '&lt;').replace('>', '&gt;');
    const escapedOlder = older.subject.replace('<', '&lt;').replace('>', '&gt;');
    expect(list.body).to.contain(`<a href="/dev/mail/${id}">${escapedNewer}</a>`);
    expect(list.body.indexOf(escapedNewer)).to.be.lessThan(list.body.indexOf(escapedOlder));
    expect(list.body).not.to.contain(newer.subject);

    const shown = await request('GET', `/dev/mail/${id}`);
    expect(shown.status).to.equal(200);
    expect(shown.body).to.contain(escapedNewer);
    expect(shown.body).to.contain('<a href="http://localhost:3000/sign/tok_123"');
    expect(shown.body).to.match(/<iframe [^>]*sandbox="[^"]*"[^>]*srcdoc="&lt;!doctype html&gt;/);

    const attachment = await request('GET', `/dev/mail/${id}/attachments/0`);
    expect(attachment.status).to.equal(200);
    expect(Buffer.compare(attachment.bytes, newer.attachments![0].content)).to.equal(0);

    expect((await request('GET', '/dev/mail/999999999')).status).to.equal(404);
    expect((await request('GET', '/dev/mail/abc')).status).to.equal(404);
    expect((await request('GET', `/dev/mail/${'9'.repeat(40)}`)).status).to.equal(404);
    expect((await request('GET', `/dev/mail/${id}/attachments/${'9'.repeat(40)}`)).status).to.equal(404);
  });

  it('is 404 in production', async () => {
    const api = await startApp({ NODE_ENV: 'production' });
    try {
      const request = client(api.url);
      expect((await request('GET', '/dev/mail')).status).to.equal(404);
      expect((await request('GET', '/dev/mail/1')).status).to.equal(404);
    } finally {
      void api.close();
    }
  });

  it('is 404 to a client that is not on loopback (here: over a Unix socket, no IP address at all)', async () => {
    const { app } = await testApp();
    const socketPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'signet-devmail-')), 'api.sock');
    const server = app.listen(socketPath);
    await new Promise((resolve) => server.once('listening', resolve));
    const statusOf = (urlPath: string) =>
      new Promise<number>((resolve, reject) =>
        http.get({ socketPath, path: urlPath }, (response) => (response.resume(), resolve(response.statusCode!))).on('error', reject),
      );
    try {
      expect(await statusOf('/dev/mail')).to.equal(404);
      expect(await statusOf('/healthz')).to.equal(200); // the same app answers other paths over that socket
    } finally {
      server.close();
    }
  });
});

describe('mail: templates', () => {
  it('escape every interpolated value in the HTML', () => {
    const invitation = invitationMail({
      signerName: '<script>alert(1)</script>',
      sender: { name: 'Eve "& Co" <evil>', email: 'eve@example.com' },
      title: '<img src=x onerror=alert(2)>',
      message: '</blockquote><script>alert(3)</script>',
      signingUrl: 'http://localhost:3000/sign/tok_1?a=1&b="2"',
      expiresAt: new Date('2026-12-01T12:00:00Z'),
    });
    expect(invitation.html).not.to.match(/<script|<img|<evil>/i);
    expect(invitation.html).to.contain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(invitation.html).to.contain('&lt;img src=x onerror=alert(2)&gt;');
    expect(invitation.html).to.contain('Eve &quot;&amp; Co&quot; &lt;evil&gt;');
    expect(invitation.html).to.contain('href="http://localhost:3000/sign/tok_1?a=1&amp;b=&quot;2&quot;"');
    expect(invitation.text).to.contain('<script>alert(1)</script>');
    expect(invitation.text).to.contain('1 December 2026');

    const declined = declinedMail({ recipientName: 'Owner', title: 'NDA', decliner: { name: '<script>', email: 'x@example.com' }, reason: '<b>no</b>' });
    expect(declined.html).not.to.contain('<script>');
    expect(declined.html).to.contain('&lt;script&gt;');
    expect(declined.html).to.contain('&lt;b&gt;no&lt;/b&gt;');
  });
});
