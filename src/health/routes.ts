import { createRouter } from '../api/router';

export type ReadinessChecks = Record<string, () => Promise<unknown>>;

const withTimeout = (check: () => Promise<unknown>, ms: number) =>
  Promise.race([check(), new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);

/** /healthz: the process is up. /readyz: every dependency answers (database, Temporal, search when configured). */
export function healthRoutes(checks: ReadinessChecks) {
  const router = createRouter();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const names = Object.keys(checks);
    const results = await Promise.allSettled(names.map((name) => withTimeout(checks[name], 2000)));
    const report = Object.fromEntries(
      names.map((name, i) => {
        const result = results[i];
        return [name, result.status === 'fulfilled' ? 'ok' : `unavailable: ${(result.reason as Error).message}`];
      }),
    );
    const ready = results.every((result) => result.status === 'fulfilled');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'unavailable', checks: report };
  });
  return router;
}
