import path from 'node:path';
import { withArticle } from '../domain/words';
import { createReadStream } from 'node:fs';
import type { Context, Middleware, Next } from 'koa';
import { koaBody } from 'koa-body';
import type { File } from 'formidable';
import { AppError, emailUnverified, notFound, validationError } from '../errors';
import { hourlyLimit, plans, rateLimitedOperations } from '../domain/plans';
import type { Account } from '../accounts/service';
import { describeUsage } from '../dashboard/usage';
import { createApiKey, listApiKeys, revokeApiKey } from '../apiKeys/service';
import { isScope, scopes as allScopes, type Scope } from '../domain/scopes';
import { jsonOrMultipartBody, readingWhileConnected, receivedFileOf } from '../api/middleware/body';
import { uploadDirOf } from '../api/receivedFile';
import { idParam } from '../api/route';
import { createRouter } from '../api/router';
import { parseInput, textProblems, z } from '../api/validation';
import { listActivity } from '../dashboard/activity';
import { getBreakdown, getStats, getTrends } from '../dashboard/service';
import { presentDocument } from '../documents/presenter';
import { DocumentUploadSchema } from '../documents/schema';
import { assertDocumentQuota, createDocument, deleteDocument, listDocuments } from '../documents/service';
import { SearchQuerySchema } from '../search/schema';
import { searchAccount } from '../search/service';
import { clientKey, countAttempt, windowLimiter } from './limits';
import { createLoginLimits } from './loginLimits';
import { getUserAndAccount, signUp, type User } from '../members/people';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../members/passwords';
import { createSessions, type Session } from './sessions';
import * as pages from './pages';
import { inConsoleWords } from './problems';
import { templatePages } from './templates';
import { bulkSendPages } from './bulkSends';
import { documentViewPages } from './documentView';
import { requestPages } from './requests';
import { webhookPages } from './webhooks';
import { brandingPages } from './branding';
import { memberPages } from './members';
import { roleAllows } from './access';
import { actingAs } from '../events/actingAs';
import { passwordResetPages } from './passwordReset';
import { emailVerificationPages, verificationMailer } from './emailVerification';
import { seeOther, type ConsoleDeps, type ConsoleKit } from './kit';
import { signingAssets } from '../signerPortal/page';

interface ConsoleState {
  session?: Session;
  user?: User;
  account?: Account;
  csrf: string;
}

// Nothing loads from anywhere but this origin; no inline script or style; forms post only here.
export const consoleCsp = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

const chartJsFile = () => path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.js');
const assets: Record<string, { file: () => string; type: string }> = {
  'console.css': { file: () => path.join(__dirname, 'assets', 'console.css'), type: 'text/css' },
  'console.js': { file: () => path.join(__dirname, 'assets', 'console.js'), type: 'text/javascript' },
  'dashboard.js': { file: () => path.join(__dirname, 'assets', 'dashboard.js'), type: 'text/javascript' },
  'chart.umd.js': { file: chartJsFile, type: 'text/javascript' },
  'templateEditor.js': { file: () => path.join(__dirname, 'assets', 'templateEditor.js'), type: 'text/javascript' },
  'requests.js': { file: () => path.join(__dirname, 'assets', 'requests.js'), type: 'text/javascript' },
  'requestFields.js': { file: () => path.join(__dirname, 'assets', 'requestFields.js'), type: 'text/javascript' },
  'fieldPlacement.js': { file: () => path.join(__dirname, 'assets', 'fieldPlacement.js'), type: 'text/javascript' }, // imported by the two above it
  'branding.js': { file: () => path.join(__dirname, 'assets', 'branding.js'), type: 'text/javascript' },
  'bulkSends.js': { file: () => path.join(__dirname, 'assets', 'bulkSends.js'), type: 'text/javascript' },
  'favicon.svg': { file: () => signingAssets['favicon.svg'].file, type: 'image/svg+xml' }, // the signing pages' icon
};

const SignupSchema = z.object({
  accountName: z.string().trim().min(1).max(100),
  email: z.email().max(320),
  password: z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH),
});
const LoginSchema = z.object({ email: z.string().trim().min(1).max(320), password: z.string().min(1).max(MAX_PASSWORD_LENGTH) });
const KeyNameSchema = z.object({ name: z.string().trim().min(1).max(100) });
const KeyIdParams = z.object({ id: idParam('apiKey', 'is not an API key id') });
const DocumentIdParams = z.object({ id: idParam('document', 'is not a document id') });

/** The owner console under /app: the same services as the REST API, with a session instead of a key. */
export function consoleRoutes(deps: ConsoleDeps) {
  const { db, events, config, search, dashboard, pdf, rateLimit, uploadGate: gate } = deps;
  const router = createRouter({ prefix: '/app' });
  const sessions = createSessions(db, config);
  const formBody = readingWhileConnected(koaBody({ json: false, text: false, urlencoded: true, multipart: false, formLimit: '32kb' }));
  const logins = createLoginLimits(db, sessions);
  const sendVerification = verificationMailer(db, config);
  // Every sign-up attempt counts: a script creating free accounts by the hundred is refused.
  const signupsByAddress = windowLimiter(db, 'console-signup-address', config.CONSOLE_SIGNUPS_PER_HOUR, 3600);

  const state = (ctx: Context): ConsoleState => ctx.state.console;
  const frame = (ctx: Context, current?: string): pages.Frame => ({ csrf: state(ctx).csrf, account: state(ctx).account, role: state(ctx).user?.role, current });
  const page = (ctx: Context, body: string, status = 200) => {
    ctx.status = status;
    ctx.type = 'text/html';
    ctx.body = body;
  };
  const account = (ctx: Context) => state(ctx).account!;
  const user = (ctx: Context) => state(ctx).user;

  // Every console response: its headers, the session, the CSRF token; a POST without the right token is refused.
  router.use(async (ctx, next) => {
    ctx.set('Content-Security-Policy', consoleCsp);
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path.startsWith('/app/assets/')) return next();
    const session = await sessions.current(ctx);
    const people = session ? await getUserAndAccount(db, session.userId) : null;
    ctx.state.console = { session: people ? session : undefined, ...people, csrf: '' } satisfies ConsoleState;
    state(ctx).csrf = sessions.csrfToken(ctx, state(ctx).session);
    ctx.state.account = people?.account; // what the shared rate limiter reads, as on the REST API
    // What the member does is theirs: every event it records names them (src/events/actingAs.ts).
    const actor = people ? ({ type: 'member', id: people.user.id, email: people.user.email } as const) : undefined;
    try {
      await actingAs(actor, () => (ctx.method === 'POST' ? checkCsrf(ctx, next) : next()));
    } catch (caught) {
      if (!(caught instanceof AppError)) throw caught;
      const error = inConsoleWords(caught);
      if (ctx.accepts('html', 'json') === 'json') throw error;
      ctx.set(error.headers);
      const problems = error.details?.length ? error.details : [error.message];
      page(ctx, pages.errorPage(frame(ctx), error.status, problems.join(' ')), error.status);
    }
  });

  async function checkCsrf(ctx: Context, next: Next) {
    if (ctx.is('application/x-www-form-urlencoded')) await formBody(ctx, async () => undefined);
    const presented = ctx.get('X-CSRF-Token') || (ctx.request.body as Record<string, unknown> | undefined)?._csrf;
    if (!sessions.csrfMatches(state(ctx).csrf, presented)) {
      throw new AppError(403, 'forbidden', 'The form has expired or did not come from this site. Reload the page and try again.');
    }
    // Every form field, whichever handler reads it, as the REST API's bodies: no NUL, no unpaired surrogate.
    const problems = textProblems(ctx.request.body);
    if (problems.length > 0) throw validationError(problems);
    await next();
  }

  // A member's role is checked here for every page of the console (the rules are in access.ts).
  const requireLoginOnly: Middleware = async (ctx, next) => {
    const { account, user } = state(ctx);
    if (!account || !user) return ctx.redirect('/app/login');
    if (!roleAllows(user.role, ctx.method, ctx.path)) {
      throw new AppError(403, 'forbidden', `As ${withArticle(user.role)} of this account you cannot do this; an admin can change your role.`);
    }
    await next();
  };
  // Every write of an account whose address is not proven is refused here, as on the REST API: a new
  // page is covered without anyone remembering to list it.
  const requireLogin: Middleware = (ctx, next) =>
    requireLoginOnly(ctx, async () => {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && !account(ctx).emailVerified) {
        throw emailUnverified('Confirm your e-mail address first: follow the link we e-mailed to you, or send it again from this page’s banner.');
      }
      await next();
    });
  const form = (ctx: Context) => (ctx.request.body ?? {}) as Record<string, string>;

  router.get('/assets/:name', async (ctx) => {
    const asset = Object.hasOwn(assets, ctx.params.name) ? assets[ctx.params.name] : undefined;
    if (!asset) throw notFound('Asset');
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = createReadStream(asset.file());
  });

  // --- Sign up, log in, log out ---
  router.get('/signup', (ctx) => page(ctx, pages.signupPage(frame(ctx))));
  router.post('/signup', async (ctx) => {
    const values = form(ctx);
    await countAttempt('Too many sign-ups from this address.', [signupsByAddress, clientKey(ctx.ip)]);
    try {
      const input = parseInput(SignupSchema, { accountName: values.accountName, email: values.email, password: values.password });
      const { user, verificationToken } = await signUp(db, input);
      await sessions.start(ctx, user.id);
      await logins.trustBrowser(ctx, user);
      // The account exists either way: a mail that failed is sent again from the console's banner.
      await sendVerification(user, verificationToken).catch((error) => ctx.state.log?.warn({ err: error }, 'verification e-mail not sent'));
      seeOther(ctx, '/app');
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      page(ctx, pages.signupPage(frame(ctx), values, error.details ?? [error.message]), error.status);
    }
  });

  router.get('/login', (ctx) => (state(ctx).account ? ctx.redirect('/app') : page(ctx, pages.loginPage(frame(ctx)))));
  router.post('/login', async (ctx) => {
    const values = form(ctx);
    const { email, password } = parseInput(LoginSchema, { email: values.email, password: values.password });
    const user = await logins.logIn(ctx, email, password);
    if (!user) return page(ctx, pages.loginPage(frame(ctx), { email }, ['The e-mail or the password is wrong.']), 401);
    await sessions.start(ctx, user.id);
    seeOther(ctx, '/app');
  });

  router.post('/logout', async (ctx) => {
    await sessions.end(ctx, state(ctx).session);
    seeOther(ctx, '/app/login');
  });

  // --- Dashboard ---
  router.get('/', requireLogin, async (ctx) => {
    const deps = { db, dashboard };
    const { id } = account(ctx);
    // The REST dashboard's service calls; the breakdown over all time, as GET /dashboard/signing-breakdown without from and to.
    const [stats, activity, trends, breakdown] = await Promise.all([
      getStats(deps, account(ctx)),
      listActivity(db, id, { limit: 20 }),
      getTrends(deps, id, 12),
      getBreakdown(deps, id, {}),
    ]);
    page(ctx, pages.dashboardPage(frame(ctx, '/app'), { stats, activity: activity.data, trends: trends.data, breakdown }));
  });

  // --- Settings: API keys ---
  const keysPage = async (ctx: Context, created?: { name: string; secret: string }, problems: string[] = [], status = 200) =>
    page(ctx, pages.apiKeysPage(frame(ctx, '/app/settings/api-keys'), (await listApiKeys(db, account(ctx).id)).reverse(), created, problems), status);

  // Keys are made before the address is proven (a developer wires up while the mail arrives): the REST
  // API lets an unproven account's keys read only.
  router.get('/settings/api-keys', requireLogin, (ctx) => keysPage(ctx));
  router.post('/settings/api-keys', requireLoginOnly, async (ctx) => {
    const { name, scopes: chosen, scopesChosen, expiresInDays } = (ctx.request.body ?? {}) as Record<string, string | string[] | undefined>;
    const parsed = KeyNameSchema.safeParse({ name });
    const listed = chosen === undefined ? [] : [chosen].flat().map(String);
    const problems = [
      ...(parsed.success ? [] : ['name must be 1 to 100 characters']),
      ...(scopesChosen && !listed.length ? ['choose at least one scope'] : []),
      ...(listed.some((scope) => !isScope(scope)) ? ['scopes must be among those listed'] : []),
      ...(pages.keyExpiries.some(([days]) => days === (expiresInDays ?? '')) ? [] : ['expiry must be one of those offered']),
    ];
    if (!parsed.success || problems.length) return keysPage(ctx, undefined, problems, 400);
    // Every box ticked (or a form without them) is a key with every scope, one that new scopes will include too.
    const keyScopes = listed.length && !allScopes.every((scope) => listed.includes(scope)) ? (listed as Scope[]) : null;
    const expiresAt = expiresInDays ? new Date(Date.now() + Number(expiresInDays) * 86_400_000) : null;
    const { id, email } = user(ctx)!;
    const { apiKey, secret } = await createApiKey(db, account(ctx).id, parsed.data.name, { scopes: keyScopes, expiresAt, createdBy: { id, email } });
    await keysPage(ctx, { name: apiKey.name, secret }, [], 201);
  });
  router.post('/settings/api-keys/:id/revoke', requireLoginOnly, async (ctx) => {
    const { id } = parseInput(KeyIdParams, ctx.params);
    await revokeApiKey(db, id, account(ctx).id); // another account's key: 404
    seeOther(ctx, '/app/settings/api-keys');
  });

  // --- Settings: plan ---
  router.get('/settings/plan', requireLogin, async (ctx) => {
    const { plan } = account(ctx);
    const rateLimits = rateLimitedOperations.map((operation) => ({ operation, limit: hourlyLimit(plan, operation, config.RATE_LIMIT_MULTIPLIER) }));
    const usage = await describeUsage(db, account(ctx));
    page(ctx, pages.planPage(frame(ctx, '/app/settings/plan'), { account: account(ctx), usage, webhooks: plans[plan].webhooks, rateLimits }));
  });

  // --- Documents ---
  router.get('/documents', requireLogin, async (ctx) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    const documents = q
      ? (await searchAccount({ db, search }, account(ctx).id, parseInput(SearchQuerySchema, { q, type: 'document', limit: '100' }))).data.map(
          (hit) => hit as unknown as ReturnType<typeof presentDocument>,
        )
      : (await listDocuments(db, account(ctx).id, { limit: 100 })).data.map(presentDocument);
    page(ctx, pages.documentsPage(frame(ctx, '/app/documents'), documents, { q, maxBytes: config.MAX_UPLOAD_BYTES }));
  });

  const quota: Middleware = async (ctx, next) => {
    await assertDocumentQuota(db, account(ctx));
    await next();
  };
  const uploadBody = jsonOrMultipartBody(config.MAX_UPLOAD_BYTES, 'file', uploadDirOf(config.dataDir));
  // The upload (console.js, with X-CSRF-Token): the REST API's rate limit, quota, upload gate, body parser and service.
  router.post('/documents', requireLogin, rateLimit('POST /documents'), quota, gate, uploadBody, async (ctx) => {
    const part = ctx.request.files?.file;
    const file = (Array.isArray(part) ? part[0] : part) as File | undefined;
    if (!file) throw validationError(['file is required']);
    const { fileName } = parseInput(DocumentUploadSchema.pick({ fileName: true }), { fileName: file.originalFilename ?? undefined });
    if (!fileName) throw validationError(['fileName is required']);
    const document = await createDocument({ db, events, pdf }, account(ctx), { fileName, fileSize: file.size, content: receivedFileOf(file) });
    ctx.status = 201;
    ctx.body = presentDocument(document);
  });
  router.post('/documents/:id/delete', requireLogin, async (ctx) => {
    const { id } = parseInput(DocumentIdParams, ctx.params);
    await deleteDocument({ db, events }, account(ctx).id, id);
    seeOther(ctx, '/app/documents');
  });

  const kit: ConsoleKit = { router, deps, rateLimit, requireLogin, requireLoginOnly, frame, page, account, user, form, seeOther, sessions, logins };
  requestPages(kit);
  templatePages(kit);
  bulkSendPages(kit);
  documentViewPages(kit);
  webhookPages(kit);
  brandingPages(kit);
  memberPages(kit);
  passwordResetPages(kit);
  emailVerificationPages(kit);

  return router;
}
