import { scopes, type Scope } from './scopes';

// What a member of an account may do, decided by their role as a key's by its scopes: a role is a set of
// scopes, checked by the same rules (src/api/scopes.ts) in the console and for the keys the member makes.
// Members, API keys, webhooks and branding take every scope: an admin's; the owner is an admin who may also
// hand the account on.

export const roles = ['owner', 'admin', 'sender', 'viewer'] as const;
export type Role = (typeof roles)[number];

/** The roles an invitation or a role change may give: ownership is only ever handed on. */
export const memberRoles = ['admin', 'sender', 'viewer'] as const satisfies readonly Role[];
export type MemberRole = (typeof memberRoles)[number];

const reads = scopes.filter((scope) => scope.endsWith(':read'));

const roleScopes: Record<Role, readonly Scope[]> = {
  owner: scopes,
  admin: scopes,
  sender: [...reads, 'documents:write', 'signatures:write', 'templates:write'],
  viewer: reads,
};

export const scopesOfRole = (role: Role): readonly Scope[] => roleScopes[role];

/** Whether the role manages the account's people, keys, webhooks and branding: it holds every scope, as a key must to manage them. */
export const managesAccount = (role: Role) => roleScopes[role].length === scopes.length;

export const roleDescriptions: Record<Role, string> = {
  owner: 'Everything an admin does, and hands the account on to another member.',
  admin: 'Members, API keys, webhooks and branding, and everything a sender does.',
  sender: 'Uploads documents, sends requests, makes templates and bulk sends; reads the rest.',
  viewer: 'Reads documents, requests, templates and webhooks; changes nothing.',
};
