import type { Middleware } from 'koa';
import { insufficientScope } from '../errors';
import { missingScopes, scopes, type KeyScopes, type Scope } from '../domain/scopes';

// The scope an operation needs, decided in one place: by its tag (the resource) and method (GET reads,
// anything else writes), unless its route says otherwise (`scope` in RouteSpec). A tag that is not listed
// here and a route that names no scope is a mistake caught when the route is defined.
const every = [...scopes];
const resource = (name: 'documents' | 'signatures' | 'templates' | 'webhooks') => ({ read: [`${name}:read` as const], write: [`${name}:write` as const] });
const byTag: Record<string, { read: Scope[]; write: Scope[] }> = {
  Documents: resource('documents'),
  'Signing requests': resource('signatures'),
  'Bulk sends': resource('signatures'),
  Templates: resource('templates'),
  Webhooks: resource('webhooks'),
  // There is no account:write: changing the account takes a key with every scope.
  Account: { read: ['account:read'], write: every },
  // Search and the dashboard show documents, signing requests and templates, or counts of them.
  Search: { read: ['documents:read', 'signatures:read', 'templates:read'], write: every },
  Dashboard: { read: ['documents:read', 'signatures:read'], write: every },
  // Managing keys takes a key that holds every scope: a scoped key can never make, or unmake, a broader one.
  'API keys': { read: every, write: every },
  // Who is in the account is the account's; changing it is an admin's: a key with every scope.
  Members: { read: ['account:read'], write: every },
};

/** The scopes an operation needs (all of them), from its explicit `scope` or its tag and method. */
export function requiredScopes(spec: { tag: string; method: string; scope?: Scope | readonly Scope[]; path: string }): Scope[] {
  if (spec.scope) return typeof spec.scope === 'string' ? [spec.scope] : [...spec.scope];
  const rule = byTag[spec.tag];
  if (!rule) throw new Error(`${spec.method.toUpperCase()} ${spec.path}: tag ${spec.tag} has no scope; add it to src/api/scopes.ts or give the route a scope`);
  return [...(spec.method === 'get' ? rule.read : rule.write)];
}

/** 403 insufficient_scope, naming what is missing, unless the request's key holds every scope in `required`. */
export function requireScopes(required: readonly Scope[]): Middleware {
  return async (ctx, next) => {
    const held: KeyScopes | undefined = ctx.state.apiKeyScopes;
    const missing = missingScopes(held ?? null, required);
    if (missing.length) {
      throw insufficientScope(
        required.length === scopes.length
          ? `This operation needs an API key with every scope; this key lacks ${missing.join(', ')}.`
          : `This operation needs the scope ${missing.join(' and ')}, which this API key does not have.`,
      );
    }
    await next();
  };
}
