import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'chai';
import fc from 'fast-check';
import { createSigningActivities } from '../../activities/signingRequest';
import { MAX_NESTING } from '../../src/api/validation';
import type { MailTransport } from '../../src/mail';
import { signingRequestHandle } from '../../src/signingRequests/workflow';
import { databaseRefusal } from '../../src/domain/signingRequests';
import { signedUp } from '../support/consoleClient';
import { client, type TestResponse } from '../support/http';
import { createSigningRequest, tokenOf } from '../support/signing';
import { createTestAccount, sharedSystem, useSharedSystem } from '../support/system';
import { templateField, uploadLease } from '../support/templates';

// Text an attacker types: NUL, unpaired surrogates (either half), noncharacters, controls, astral
// characters, anything. Every endpoint answers 2xx or 400, never a 500 or nothing, and what it
// accepts reads back exactly.

const hostileUnit = fc.oneof(
  fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\ufffe', '\uffff', '\ufdd0', '\u{10ffff}', '\u0007', '\u202e', '😀', '署', 'Ω', ' '),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const hostileText = fc.string({ unit: hostileUnit, minLength: 1, maxLength: 10 });
const storable = (value: string) => value.isWellFormed() && !value.includes('\u0000');
const flawOf = (value: string) =>
  value.includes('\u0000') ? 'must not contain NUL characters' : 'must be well-formed Unicode (it has an unpaired UTF-16 surrogate)';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

/**
 * `value` sent as `field`: text that cannot be stored is a 400 naming the field; other text is stored
 * and reads back as `expected`, or refused by a rule of the field (a 400 naming it: blank, too long…).
 */
async function expectStoredOrRefused(response: TestResponse, field: string, value: string, readBack: () => Promise<unknown>, expected = value) {
  const why = `${field} = ${JSON.stringify(value)}: ${response.status} ${JSON.stringify(response.body)}`;
  expect(response.status, why).to.be.oneOf([200, 201, 400]);
  if (response.status === 400) {
    expect(response.body.error, why).to.equal('validation_error');
    expect(
      response.body.details.some((detail: string) => detail.startsWith(`${field} `)),
      why,
    ).to.equal(true);
  }
  if (!storable(value)) {
    expect(response.status, why).to.equal(400);
    expect(response.body.details, why).to.include(`${field} ${flawOf(value)}`);
  } else if (response.status !== 400) {
    expect(await readBack(), why).to.equal(expected);
  }
}

const signerLink = async (account: Account, body: Record<string, unknown> = {}) => {
  const { signingRequest } = await createSigningRequest(account.request, body);
  const link = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/link`);
  return { signingRequest, token: tokenOf(link.body.url), anonymous: client(account.system.url!) };
};

describe('hostile text: the issue’s reproductions are 400s naming the field', function () {
  useSharedSystem();

  this.timeout(60_000);
  const surrogate = 'must be well-formed Unicode (it has an unpaired UTF-16 surrogate)';

  it('a cancel reason "a\\ud800b", a decline reason and a typed signature "Me \\udfff": 400, and the request stays pending', async () => {
    const account = await createTestAccount();
    const { signingRequest, token, anonymous } = await signerLink(account);
    const cancelled = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: { reason: 'a\ud800b' } });
    expect(cancelled.status).to.equal(400);
    expect(cancelled.body.details).to.deep.equal([`reason ${surrogate}`]);
    const declined = await anonymous('POST', `/sign/${token}/decline`, { json: { reason: 'a\ud800b' } });
    expect(declined.body.details).to.deep.equal([`reason ${surrogate}`]);
    const signed = await anonymous('POST', `/sign/${token}/sign`, { json: { consent: true, signature: { type: 'typed', value: 'Me \udfff' } } });
    expect(signed.body.details).to.deep.equal([`signature.value ${surrogate}`]);
    const after = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
    expect(after.body.status).to.equal('pending');
    expect(after.body.progress.stage).to.equal('awaiting_signers');
  });

  it('a lone surrogate in a prefill value, a template role or a label: 400 naming it', async () => {
    const account = await createTestAccount();
    const documentId = await uploadLease(account.request);
    const role = await account.request('POST', '/api/v1/templates', {
      json: { name: 'T', documentId, roles: [{ name: 'ten\udc00ant' }], fields: [templateField('tenant', 'signature')] },
    });
    expect(role.status).to.equal(400);
    expect(role.body.details).to.deep.equal([`roles.0.name ${surrogate}`]);
    const label = await account.request('POST', '/api/v1/templates', {
      json: { name: 'T', documentId, roles: [{ name: 'tenant' }], fields: [templateField('tenant', 'signature', { label: '\ud800' })] },
    });
    expect(label.body.details).to.deep.equal([`fields.0.label ${surrogate}`]);
    const template = await account.request('POST', '/api/v1/templates', {
      json: {
        name: 'T',
        documentId,
        roles: [{ name: 'tenant' }],
        fields: [templateField('tenant', 'signature'), { ...templateField('tenant', 'signature', { y: 200 }), type: 'text', label: 'rent' }],
      },
    });
    expect(template.status).to.equal(201);
    const prefill = await account.request('POST', '/api/v1/signatures', {
      json: {
        template_id: template.body.id,
        title: 'Lease',
        signers: [{ name: 'Ada', email: 'ada@example.com', role: 'tenant' }],
        prefill: { rent: '1200 \ud83d' },
      },
    });
    expect(prefill.status).to.equal(400);
    expect(prefill.body.details).to.deep.equal([`prefill.rent ${surrogate}`]);
  });

  it('%00 in a console API-key name or another console form field: 400 naming it, nothing created', async () => {
    const system = await sharedSystem();
    const { browser } = await signedUp(system.url!);
    const name = `ci-${Math.random().toString(36).slice(2)}`;
    const keys = await browser.submit('/app/settings/api-keys', '/app/settings/api-keys', { name: `${name}\u0000` });
    expect(keys.status).to.equal(400);
    expect(keys.text).to.contain('name must not contain NUL characters');
    expect(await system.database.knex('api_keys').where('name', 'like', `${name}%`)).to.have.length(0);
    const hook = await browser.submit('/app/webhooks/new', '/app/webhooks', { url: 'https://example.com/hook', events: '*', description: 'a\u0000b' });
    expect(hook.status).to.equal(400);
    expect(hook.text).to.contain('description must not contain NUL characters');
  });
});

describe('hostile text: random Unicode on representative endpoints (fast-check)', function () {
  useSharedSystem();

  this.timeout(180_000);

  it('document names, webhook descriptions, template roles and labels', async () => {
    const account = await createTestAccount();
    const documentId = await uploadLease(account.request);
    await fc.assert(
      fc.asyncProperty(hostileText, async (name) => {
        const created = await account.request('POST', '/api/v1/documents', { json: { fileName: name, fileSize: 10 } });
        await expectStoredOrRefused(
          created,
          'fileName',
          name,
          async () => (await account.request('GET', `/api/v1/documents/${created.body.id}`)).body.fileName,
          name.trim(),
        );
      }),
      { numRuns: 25 },
    );
    await fc.assert(
      fc.asyncProperty(hostileText, async (description) => {
        const created = await account.request('POST', '/api/v1/webhooks', { json: { url: 'https://example.com/hook', events: ['*'], description } });
        await expectStoredOrRefused(
          created,
          'description',
          description,
          async () => (await account.request('GET', `/api/v1/webhooks/${created.body.id}`)).body.description,
          description.trim(),
        );
      }),
      { numRuns: 10 },
    );
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, async (role, label) => {
        const created = await account.request('POST', '/api/v1/templates', {
          json: { name: 'Random', documentId, roles: [{ name: role }], fields: [templateField(role, 'signature', { label })] },
        });
        const why = `${JSON.stringify({ role, label })}: ${created.status} ${JSON.stringify(created.body)}`;
        expect(created.status, why).to.be.oneOf([201, 400]);
        const given: [string, string][] = [
          ['roles.0.name', role],
          ['fields.0.role', role],
          ['fields.0.label', label],
        ];
        if (created.status === 400) {
          for (const [field, value] of given) if (!storable(value)) expect(created.body.details, why).to.include(`${field} ${flawOf(value)}`);
          // Storable text refused by a rule of its field (blank, say).
          expect(
            created.body.details.every((detail: string) => given.some(([field]) => detail.startsWith(`${field} `))),
            why,
          ).to.equal(true);
        } else {
          expect(
            given.every(([, value]) => storable(value)),
            why,
          ).to.equal(true);
          const template = (await account.request('GET', `/api/v1/templates/${created.body.id}`)).body;
          expect([template.roles[0].name, template.fields[0].role, template.fields[0].label], why).to.deep.equal([role.trim(), role.trim(), label.trim()]);
        }
      }),
      { numRuns: 15 },
    );
  });

  it('prefill values, cancel reasons, decline reasons and typed signatures', async () => {
    const account = await createTestAccount();
    const documentId = await uploadLease(account.request);
    const template = await account.request('POST', '/api/v1/templates', {
      json: {
        name: 'Note',
        documentId,
        roles: [{ name: 'tenant' }],
        fields: [templateField('tenant', 'signature'), { ...templateField('tenant', 'signature', { y: 200 }), type: 'text', label: 'note' }],
      },
    });
    await fc.assert(
      fc.asyncProperty(hostileText, async (note) => {
        const created = await account.request('POST', '/api/v1/signatures', {
          json: { template_id: template.body.id, title: 'Lease', signers: [{ name: 'Ada', email: 'ada@example.com', role: 'tenant' }], prefill: { note } },
        });
        const readBack = async () =>
          (await account.request('GET', `/api/v1/signatures/${created.body.id}`)).body.signers[0].fields.find(
            (field: { label: string }) => field.label === 'note',
          ).value;
        await expectStoredOrRefused(created, 'prefill.note', note, readBack);
      }),
      { numRuns: 8 },
    );
    await fc.assert(
      fc.asyncProperty(hostileText, async (reason) => {
        const { signingRequest } = await createSigningRequest(account.request);
        const cancelled = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: { reason } });
        const readBack = async () => {
          const trail = (await account.request('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`)).body.data;
          return trail.find((step: { action: string }) => step.action === 'cancelled').data.reason;
        };
        await expectStoredOrRefused(cancelled, 'reason', reason, readBack);
        const after = (await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body;
        expect(after.status).to.equal(cancelled.status === 200 ? 'cancelled' : 'pending');
      }),
      { numRuns: 8 },
    );
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, async (reason, typed) => {
        const { signingRequest, token, anonymous } = await signerLink(account);
        const declined = await anonymous('POST', `/sign/${token}/decline`, { json: { reason } });
        const readBack = async () => (await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.signers[0].declineReason;
        await expectStoredOrRefused(declined, 'reason', reason, readBack, reason.trim());
        if (declined.status === 200) return;
        const signed = await anonymous('POST', `/sign/${token}/sign`, { json: { consent: true, signature: { type: 'typed', value: typed } } });
        const status = async () =>
          (await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.signers[0].status === 'signed' ? typed : 'not signed';
        await expectStoredOrRefused(signed, 'signature.value', typed, status);
      }),
      { numRuns: 6 },
    );
  });
});

describe('hostile nesting: deep JSON on every JSON endpoint is one 400', function () {
  useSharedSystem();

  this.timeout(120_000);
  const tooDeep = `body must be nested at most ${MAX_NESTING} levels deep`;
  /** `{"a":[[…]]}`, `depth` levels deep in all. */
  const nested = (depth: number, arrays: boolean[]) => {
    let inner = '1';
    for (let level = depth - 1; level >= 1; level--) inner = arrays[level % arrays.length] ? `[${inner}]` : `{"k":${inner}}`;
    return `{"a":${inner}}`;
  };

  /** Every operation of the OpenAPI document that takes a JSON body, its path ids filled with ids of the right shape. */
  async function jsonOperations(account: Account) {
    const openapi = (await account.request('GET', '/api/v1/openapi.json')).body;
    const operations: { method: string; path: string }[] = [];
    for (const [path, methods] of Object.entries(
      openapi.paths as Record<
        string,
        Record<string, { requestBody?: { content?: object }; parameters?: { name: string; in: string; schema: { example?: string } }[] }>
      >,
    )) {
      for (const [method, operation] of Object.entries(methods)) {
        if (!operation.requestBody?.content || !('application/json' in operation.requestBody.content)) continue;
        const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
          const example = operation.parameters?.find((parameter) => parameter.in === 'path' && parameter.name === name)?.schema.example;
          return example ?? 'A'.repeat(43); // the signer's token
        });
        operations.push({ method: method.toUpperCase(), path: path.startsWith('/sign/') ? filled : `/api/v1${filled}` });
      }
    }
    return operations;
  }

  it('10,000 levels deep, with and without an API key (the signer’s endpoints take none)', async () => {
    const account = await createTestAccount();
    const operations = await jsonOperations(account);
    expect(operations.map(({ path }) => path)).to.include.members([
      '/api/v1/signatures',
      '/api/v1/templates',
      '/api/v1/webhooks',
      `/sign/${'A'.repeat(43)}/sign`,
    ]);
    const body = nested(10_000, [true, false]);
    for (const { method, path } of operations) {
      const response = await account.request(method, path, { body: Buffer.from(body), headers: { 'Content-Type': 'application/json' } });
      expect(response.status, `${method} ${path}`).to.equal(400);
      expect(response.body.details, `${method} ${path}`).to.deep.equal([tooDeep]);
    }
    const unauthenticated = await client(account.system.url!)('POST', `/sign/${'A'.repeat(43)}/sign`, {
      body: Buffer.from(body),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(unauthenticated.status).to.equal(400);
    expect(unauthenticated.body.details).to.deep.equal([tooDeep]);
  });

  it('random nesting on several endpoints: past the limit one 400 saying so, within it the schema’s 400', async () => {
    const account = await createTestAccount();
    const operations = (await jsonOperations(account)).filter(({ path }) =>
      /^\/(api\/v1\/(signatures|templates|webhooks|documents)|sign\/\w+\/(sign|decline))$/.test(path),
    );
    expect(operations.length).to.be.at.least(6);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...operations),
        fc.integer({ min: 1, max: 3 * MAX_NESTING }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        async ({ method, path }, depth, arrays) => {
          const response = await account.request(method, path, { body: Buffer.from(nested(depth, arrays)), headers: { 'Content-Type': 'application/json' } });
          expect(response.status, `${method} ${path} ${depth}`).to.equal(400);
          if (depth > MAX_NESTING) expect(response.body.details).to.deep.equal([tooDeep]);
          else expect(response.body.details).not.to.include(tooDeep);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('a change the database refuses for good (past validation)', function () {
  useSharedSystem();

  this.timeout(60_000);

  it('the activity fails at once, not retried: recordCancellation of "a\\ud800b" is a non-retryable failure and writes nothing', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const system = await sharedSystem();
    const mail: MailTransport = { send: async () => undefined } as unknown as MailTransport;
    const activities = createSigningActivities({ db: system.database.knex, events: system.events, config: system.config, mail });
    const failure = await activities.recordCancellation(signingRequest.id, 'a\ud800b', null).then(
      () => expect.fail('recorded'),
      (error: unknown) => error,
    );
    expect(failure).to.be.instanceOf(ApplicationFailure);
    expect(failure).to.include({ type: databaseRefusal, nonRetryable: true });
    const row = await account.db('signing_requests').where({ id: signingRequest.id }).first('status');
    expect(row.status).to.equal('pending');
  });

  it('an update past validation: 400, the request stays pending with no audit step, its signers can sign, and it can still be cancelled', async () => {
    const account = await createTestAccount();
    const { signingRequest, token, anonymous } = await signerLink(account);
    const system = await sharedSystem();
    const refused = await signingRequestHandle(system.client, signingRequest.id)
      .cancel('a\ud800b')
      .then(
        () => expect.fail('cancelled'),
        (error: { status?: number; details?: string[] }) => error,
      );
    expect(refused.status).to.equal(400);
    const after = (await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body;
    expect(after.status).to.equal('pending');
    expect(after.progress).to.deep.equal({ stage: 'awaiting_signers', waitingFor: after.signers.map((signer: { id: string }) => signer.id), sealing: null });
    const trail = (await account.request('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`)).body.data;
    expect(trail.map((step: { action: string }) => step.action)).not.to.include('cancelled');

    // Not cancelled to its signers either: the first signs.
    const signed = await anonymous('POST', `/sign/${token}/sign`, { json: { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } } });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    const cancelled = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: { reason: 'changed my mind' } });
    expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
    expect(cancelled.body.status).to.equal('cancelled');
  });
});
