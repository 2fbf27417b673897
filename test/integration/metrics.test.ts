import os from 'node:os';
import { expect } from 'chai';
import knexFactory from 'knex';
import { startMetricsServer } from '../../src/metrics';
import { countWebhookBacklog } from '../../src/webhooks/store';
import { createLogger } from '../../src/logger';
import { client } from '../support/http';
import { createSigningRequest, eventually, tokenOf } from '../support/signing';
import { createTestAccount, sharedSystem } from '../support/system';

async function scrape() {
  const response = await fetch((await sharedSystem()).metricsUrl!);
  expect(response.status).to.equal(200);
  return response.text();
}

/** The value of one series, e.g. value(text, 'signet_signing_requests_total', { status: 'cancelled' }); 0 when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}) {
  const wanted = Object.entries(labels).map(([label, labelValue]) => `${label}="${labelValue}"`);
  const line = text.split('\n').find((candidate) => {
    const [series] = candidate.split(' ');
    return (series === name || series.startsWith(`${name}{`)) && wanted.every((pair) => series.includes(pair));
  });
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('GET /metrics (METRICS_HOST:METRICS_PORT)', () => {
  it('answers on its own server bound to 127.0.0.1, never on the public port', async () => {
    const system = await sharedSystem();
    const url = new URL(system.metricsUrl!);
    expect(url.hostname).to.equal('127.0.0.1');
    expect(url.port).not.to.equal(new URL(system.url!).port);
    const response = await fetch(url);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.contain('text/plain');
    expect((await client(system.url!)('GET', '/metrics')).status).to.equal(404);
    // Bound to loopback: the same port on this machine's other addresses refuses the connection.
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((address) => address?.family === 'IPv4' && !address.internal);
    if (external) {
      const refused = await fetch(`http://${external.address}:${url.port}/metrics`).then(
        () => false,
        () => true,
      );
      expect(refused, `reachable on ${external.address}`).to.equal(true);
    }
  });

  it('signet_http_request_duration_seconds: labelled with the route template and status, never a raw id', async () => {
    const { request } = await createTestAccount();
    expect((await request('GET', '/api/v1/documents/doc_metricsprobe')).status).to.equal(404);
    expect((await request('GET', '/api/documents/doc_metricsprobe')).status).to.equal(404);
    expect((await request('GET', '/api/v1/documents')).status).to.equal(200);
    expect((await client((await sharedSystem()).url!)('GET', '/api/v1/documents/doc_metricsprobe')).status).to.equal(401);
    expect((await request('GET', '/no/such/page')).status).to.equal(404);
    const text = await scrape();
    const count = (route: string, status: string) => value(text, 'signet_http_request_duration_seconds_count', { route, status });
    expect(count('/api/v1/documents/:id', '404')).to.be.at.least(2);
    expect(count('/api/v1/documents/:id', '401')).to.be.at.least(1);
    expect(count('/api/v1/documents', '200')).to.be.at.least(1);
    expect(count('unmatched', '404')).to.be.at.least(1);
    expect(text).not.to.contain('doc_metricsprobe');
    expect(text).not.to.contain('/no/such/page');
  });

  it('signet_signing_requests_total counts a cancelled and a completed request', async function () {
    this.timeout(90_000);
    const account = await createTestAccount();
    const before = await scrape();
    const cancelledBefore = value(before, 'signet_signing_requests_total', { status: 'cancelled' });
    const completedBefore = value(before, 'signet_signing_requests_total', { status: 'completed' });

    const { signingRequest: toCancel } = await createSigningRequest(account.request);
    expect((await account.request('POST', `/api/v1/signatures/${toCancel.id}/cancel`, { json: { reason: 'Sent by mistake' } })).status).to.equal(200);

    const { signingRequest: toSign } = await createSigningRequest(account.request, { signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] });
    const link = await account.request('POST', `/api/v1/signatures/${toSign.id}/signers/${toSign.signers[0].id}/link`);
    expect(link.status, JSON.stringify(link.body)).to.equal(200);
    const signed = await client(account.system.url!)('POST', `/sign/${tokenOf(link.body.url)}/sign`, {
      json: { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } },
    });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);

    await eventually(async () => {
      const text = await scrape();
      expect(value(text, 'signet_signing_requests_total', { status: 'cancelled' })).to.be.at.least(cancelledBefore + 1);
      expect(value(text, 'signet_signing_requests_total', { status: 'completed' })).to.be.at.least(completedBefore + 1);
    }, 60_000);
  });

  it('signet_webhook_backlog and the default process metrics are in every scrape', async () => {
    const text = await scrape();
    expect(text).to.match(/^signet_webhook_backlog \d+$/m);
    expect(text).to.match(/^signet_process_cpu_seconds_total /m);
    expect(text).to.match(/^signet_nodejs_eventloop_lag_seconds /m);
  });

  it("the Temporal SDK's worker metrics come in the same scrape when the process runs a worker", async () => {
    expect((await sharedSystem()).config.runWorker).to.equal(true);
    await eventually(async () => expect(await scrape()).to.match(/^temporal_\w+(\{[^}]*\})? /m), 30_000);
  });
});

describe('startMetricsServer', () => {
  const logger = createLogger('silent');

  it('METRICS_PORT=off serves nothing', async () => {
    expect(await startMetricsServer({ METRICS_PORT: 'off', METRICS_HOST: '127.0.0.1' }, logger)).to.equal(undefined);
  });

  it('a database that does not answer and a Temporal endpoint that is gone do not break the scrape', async () => {
    const unreachable = knexFactory({
      client: 'pg',
      connection: 'postgres://signet@127.0.0.1:1/none',
      pool: { min: 0, max: 1 },
      log: { warn: () => undefined },
    });
    const server = await startMetricsServer({ METRICS_PORT: 0, METRICS_HOST: '127.0.0.1' }, logger, {
      countWebhookBacklog: (timeoutMs) => countWebhookBacklog(unreachable, timeoutMs),
      temporalMetricsUrl: 'http://127.0.0.1:1/metrics',
    });
    try {
      const response = await fetch(server!.url);
      expect(response.status).to.equal(200);
      const text = await response.text();
      expect(text).to.match(/^signet_webhook_backlog 0$/m);
      expect(text).to.contain('signet_http_request_duration_seconds');
    } finally {
      await server!.close();
      await unreachable.destroy();
    }
  });
});
