import type { OpenAPIRegistry, ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { notFound } from '../errors';
import { idPattern, idPrefixes, isId, type IdKind } from '../domain/ids';
import type { Scope } from '../domain/scopes';
import { jsonBody } from './middleware/body';
import { IdempotencyKeyHeader, idempotentReplayedHeader, jsonContent, pickErrors, type errorResponses } from './openapi';
import { requiredScopes, requireScopes } from './scopes';
import { parseInput, parseInputWithRules, z } from './validation';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Schema = z.ZodType;
type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;
type LinkObject = NonNullable<ResponseConfig['links']>[string];

export interface RouteSpec<Params extends Schema | undefined, Query extends Schema | undefined, Body extends Schema | undefined> {
  method: Method;
  /** The OpenAPI path, e.g. `/documents/{id}`; the router gets `/documents/:id`. */
  path: string;
  /**
   * The operation's name in the OpenAPI document, for what it does (`createSigningRequest`, `listDocuments`):
   * generated clients name their methods after it, and links (see `linkTo`) point at it. Unique.
   */
  operationId: string;
  /** The resource: with the method, it decides the scope the operation needs (src/api/scopes.ts). */
  tag: string;
  /** The scope (or scopes, all needed) of an operation the tag and method do not decide. */
  scope?: Scope | readonly Scope[];
  summary: string;
  description?: string;
  /** Path parameters; an id that fails its schema (see `idParam`) is a 404, before any query. */
  params?: Params;
  query?: Query;
  /** A JSON body, parsed with `jsonBody()` unless `parseBody` says otherwise. */
  body?: Body;
  /**
   * The rules the handler checks once the body's shape is right (those that need the database, say),
   * also checked, as far as they can be, on a body whose shape is wrong: its 400 then lists every problem.
   */
  bodyRules?: (body: unknown, ctx: Context) => Promise<string[]>;
  parseBody?: Middleware;
  /** The OpenAPI request body of a body the handler reads itself (multipart, a file), in place of `body`. */
  requestBody?: NonNullable<RouteConfig['request']>['body'];
  /** Rate limits, gates: run before the body is read. */
  before?: Middleware[];
  /** The success response: its status and schema (or a full OpenAPI response for files and 204s). */
  status?: number;
  response: Schema | NonNullable<RouteConfig['responses']>[number];
  /** The success response's OpenAPI description when `response` is a schema; default 'OK'. */
  responseDescription?: string;
  /** OpenAPI links of the success response: the operations its answer leads to (see `linkTo`). */
  links?: Record<string, LinkObject>;
  /** Errors this route's own rules give; those every route of its shape can give are added (see `implicitErrors`). */
  errors: (keyof typeof errorResponses)[];
  /** For routes outside /api/v1 (the signer's): their own server and no API key. */
  servers?: RouteConfig['servers'];
  security?: RouteConfig['security'];
}

export interface RouteInput<Params, Query, Body> {
  params: Params;
  query: Query;
  body: Body;
}

/**
 * One declaration per route: it registers the OpenAPI path and the Koa route together, validates
 * params, query and body with one schema each, and hands the handler a typed input. The handler
 * returns the response body (or sets ctx itself for files and streams and returns undefined); a 204
 * route's handler returns nothing.
 */
function defineRoute<Params extends Schema | undefined = undefined, Query extends Schema | undefined = undefined, Body extends Schema | undefined = undefined>(
  { router, openapi, idempotency }: RouteKit,
  spec: RouteSpec<Params, Query, Body>,
  handler: (input: RouteInput<Parsed<Params>, Parsed<Query>, Parsed<Body>>, ctx: Context) => unknown,
) {
  const status = spec.status ?? 200;
  // Every operation under the API key names the scopes it needs; the signer's routes have their own security.
  const scopes = spec.security === undefined ? requiredScopes(spec) : [];
  const response = spec.response instanceof z.ZodType ? { description: spec.responseDescription ?? 'OK', ...jsonContent(spec.response) } : spec.response;
  const idempotent = isIdempotent(spec);
  openapi.registerPath({
    method: spec.method,
    path: spec.path,
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    request: {
      ...(spec.params ? { params: spec.params as never } : {}),
      ...(spec.query ? { query: spec.query as never } : {}),
      // A body whose every field is optional may be left out: an absent body reads as {}.
      ...(spec.body ? { body: { required: !spec.body.safeParse({}).success, ...jsonContent(spec.body) } } : {}),
      ...(spec.requestBody ? { body: { required: true, ...spec.requestBody } } : {}),
      ...(idempotent ? { headers: z.object({ 'Idempotency-Key': IdempotencyKeyHeader }) } : {}),
    },
    responses: {
      [status]: {
        ...response,
        ...(idempotent ? { headers: { ...('headers' in response ? response.headers : {}), ...idempotentReplayedHeader } } : {}),
        ...(spec.links ? { links: spec.links } : {}),
      },
      ...pickErrors(...implicitErrors(spec), ...spec.errors),
    },
    ...(spec.servers ? { servers: spec.servers } : {}),
    security: spec.security ?? [{ bearerAuth: scopes }],
  });
  if (idempotent && !idempotency)
    throw new Error(`${spec.method.toUpperCase()} ${spec.path} takes an Idempotency-Key, but its router has no idempotency middleware`);
  // A kept answer is replayed only past the scope check: a key may not get by replay what it may not do.
  const middleware = [
    ...(spec.security === undefined ? [requireScopes(scopes)] : []),
    ...(idempotent ? [idempotency!] : []),
    ...(spec.before ?? []),
    ...(spec.body || spec.parseBody ? [spec.parseBody ?? jsonBody()] : []),
  ];
  const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
  router[spec.method](koaPath, ...middleware, async (ctx: Context) => {
    const params = spec.params ? parsePathParams(spec.params, ctx.params) : undefined;
    const query = spec.query ? parseInput(spec.query, ctx.query) : undefined;
    const raw = ctx.request.body ?? {};
    const body =
      spec.body && spec.bodyRules
        ? await parseInputWithRules(spec.body, raw, (input) => spec.bodyRules!(input, ctx))
        : spec.body
          ? parseInput(spec.body, raw)
          : undefined;
    const result = await handler({ params, query, body } as RouteInput<Parsed<Params>, Parsed<Query>, Parsed<Body>>, ctx);
    if (result !== undefined) {
      ctx.status = status;
      ctx.body = result;
    } else if (status === 204) {
      ctx.status = 204;
    }
  });
}

/**
 * The errors a route can give by its shape alone: 401 without a valid key (every route but the
 * signer's), 403 insufficient_scope for a key without the operation's scope (and email_unverified for a
 * write by an account whose address is not proven yet), 404 for a path id, 400 for a query, and 400, 408, 413 and 415 for a body (unreadable,
 * stalled, too large, or not of a media type it takes); a POST's Idempotency-Key adds 400, 409 and 422.
 */
function implicitErrors(spec: RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined>) {
  const errors: (keyof typeof errorResponses)[] = [];
  if (spec.security === undefined) errors.push(401);
  if (spec.security === undefined) errors.push(403);
  if (spec.params) errors.push(404);
  if (spec.query) errors.push(400);
  if (spec.body || spec.parseBody || spec.requestBody) errors.push(400, 408, 413, 415);
  if (isIdempotent(spec)) errors.push(400, 409, 422);
  return errors;
}

/** The API's POSTs take an Idempotency-Key (src/api/middleware/idempotency.ts); the signer's page does not. */
const isIdempotent = (spec: { method: Method; security?: RouteConfig['security'] }) => spec.method === 'post' && spec.security === undefined;

/** An OpenAPI link to the operation `operationId`, its parameters (and fields of its body) taken from runtime expressions. */
export const linkTo = (operationId: string, parameters: Record<string, string>, requestBody?: Record<string, string>): LinkObject => ({
  operationId,
  parameters,
  ...(requestBody ? { requestBody } : {}),
});

/** Links to operations given the `{id}` of the resource in the response, each named after its operation (`getDocument`: `GetDocument`). */
export const linksById = (...operationIds: string[]) =>
  Object.fromEntries(
    operationIds.map((operationId) => [operationId[0].toUpperCase() + operationId.slice(1), linkTo(operationId, { id: '$response.body#/id' })]),
  );

/** Content-Disposition of a download: the file's own name, in UTF-8 whatever its characters. */
export const attachment = (fileName: string) => `attachment; filename*=UTF-8''${encodeURIComponent(fileName)}`;

/**
 * Path parameters: one that cannot be valid (an id of the wrong kind) is the same answer as one that
 * does not exist, 404 for `what` (or the schema's message), with no database query.
 */
export function parsePathParams<S extends Schema>(schema: S, params: unknown, what?: string): z.output<S> {
  const result = schema.safeParse(params);
  if (!result.success) throw notFound(what ?? result.error.issues[0]?.message ?? 'Resource');
  return result.data;
}

/** A path id of one kind: `sr_…` for signing requests; anything else is 404. */
export const idParam = (kind: IdKind, what: string) =>
  z
    .string()
    .refine((value) => isId(kind, value), { error: what })
    .openapi({ pattern: idPattern(kind).source, example: `${idPrefixes[kind]}_01jd8x3c6hf1z8k3q2v5n7m9pt` });

const PaginationSchema = z.object({ limit: z.number().int(), hasMore: z.boolean(), nextCursor: z.string().nullable() }).openapi('Pagination');

/** The list envelope every list endpoint answers with. */
export const listOf = (item: Schema) => z.object({ data: z.array(item), pagination: PaginationSchema });

/** A page of rows in that envelope, each row presented. */
export const presentPage = <Row, Item>(page: { data: Row[]; hasMore: boolean; nextCursor: string | null }, limit: number, present: (row: Row) => Item) => ({
  data: page.data.map(present),
  pagination: { limit, hasMore: page.hasMore, nextCursor: page.nextCursor },
});

/** What routes are defined on: a router, the OpenAPI registry, and for the API's POSTs the Idempotency-Key middleware (idempotency.ts). */
export interface RouteKit {
  router: Router;
  openapi: OpenAPIRegistry;
  idempotency?: Middleware;
}

/** `defineRoute` bound to one router and registry, as a route file uses it: `const route = routesOn(deps)`. */
export const routesOn =
  (kit: RouteKit) =>
  <Params extends Schema | undefined = undefined, Query extends Schema | undefined = undefined, Body extends Schema | undefined = undefined>(
    spec: RouteSpec<Params, Query, Body>,
    handler: (input: RouteInput<Parsed<Params>, Parsed<Query>, Parsed<Body>>, ctx: Context) => unknown,
  ) =>
    defineRoute(kit, spec, handler);
