import { expect } from 'chai';
import { paginate, retryingFetch } from '../../sdk/src';

// The SDK's own logic, without a service; test/integration/sdk.test.ts drives it against one.
describe('the SDK’s retries and pagination (no service)', () => {
  it('retries a 503, a network error, a 429 and a 409 in progress with one Idempotency-Key on a POST, and stops at maxRetries', async () => {
    const seen: { method: string; key: string | null }[] = [];
    const answers: (() => Response)[] = [
      () => new Response('{}', { status: 503 }),
      () => {
        throw new TypeError('fetch failed');
      },
      () => new Response('{}', { status: 429, headers: { 'Retry-After': '0' } }),
      () => new Response('{"error":"idempotency_in_progress"}', { status: 409, headers: { 'Retry-After': '0' } }),
      () => new Response('{"ok":true}', { status: 201 }),
    ];
    const fake = (async (input: Request) => {
      seen.push({ method: input.method, key: input.headers.get('Idempotency-Key') });
      expect(await input.text()).to.equal('{"a":1}');
      return answers[seen.length - 1]();
    }) as typeof fetch;
    const response = await retryingFetch(fake, 4, 1)('http://signet.test/api/v1/x', { method: 'POST', body: '{"a":1}' });
    expect(response.status).to.equal(201);
    expect(seen).to.have.length(5);
    expect(new Set(seen.map((s) => s.key)).size).to.equal(1);
    expect(seen[0].key).to.match(/^[0-9a-f-]{36}$/);

    seen.length = 0;
    const always = (async (input: Request) => (
      seen.push({ method: input.method, key: input.headers.get('Idempotency-Key') }),
      new Response('', { status: 500 })
    )) as typeof fetch;
    expect((await retryingFetch(always, 2, 1)('http://signet.test/x', { method: 'GET' })).status).to.equal(500);
    expect(seen).to.deep.equal([
      { method: 'GET', key: null },
      { method: 'GET', key: null },
      { method: 'GET', key: null },
    ]);
    const conflict = (async () => new Response('{"error":"conflict"}', { status: 409 })) as typeof fetch;
    expect((await retryingFetch(conflict, 2, 1)('http://signet.test/x', { method: 'POST' })).status, 'a plain 409 is an answer').to.equal(409);
    const given = (async (input: Request) => (
      seen.push({ method: input.method, key: input.headers.get('Idempotency-Key') }),
      new Response('', { status: 200 })
    )) as typeof fetch;
    await retryingFetch(given, 2, 1)('http://signet.test/x', { method: 'POST', headers: { 'Idempotency-Key': 'mine' } });
    expect(seen.at(-1)).to.deep.equal({ method: 'POST', key: 'mine' });
  });

  it('walks every page of a list by its cursor', async () => {
    const pages: Record<string, { data: number[]; pagination: { limit: number; hasMore: boolean; nextCursor: string | null } }> = {
      '': { data: [1, 2], pagination: { limit: 2, hasMore: true, nextCursor: 'b' } },
      b: { data: [3, 4], pagination: { limit: 2, hasMore: true, nextCursor: 'c' } },
      c: { data: [5], pagination: { limit: 2, hasMore: false, nextCursor: null } },
    };
    const items = [];
    for await (const item of paginate(async (query: { cursor?: string; limit?: number }) => pages[query.cursor ?? ''], { limit: 2 })) items.push(item);
    expect(items).to.deep.equal([1, 2, 3, 4, 5]);
  });
});
