// What an API key may do: one scope per resource and access. A key holds a list of them, or all of
// them (its scopes are null: every key made before scopes existed, and any key made without a list).

export const scopes = [
  'documents:read',
  'documents:write',
  'signatures:read',
  'signatures:write',
  'templates:read',
  'templates:write',
  'webhooks:read',
  'webhooks:write',
  'account:read',
] as const;

export type Scope = (typeof scopes)[number];

/** The scopes a key holds: null means all of them. */
export type KeyScopes = readonly Scope[] | null;

export const isScope = (value: string): value is Scope => (scopes as readonly string[]).includes(value);

/** The scopes among `required` that a key holding `held` lacks (none for a key holding all). */
export const missingScopes = (held: KeyScopes, required: readonly Scope[]): Scope[] => (held === null ? [] : required.filter((scope) => !held.includes(scope)));

/** A key's scopes written out: all of them for null. */
export const scopesOf = (held: KeyScopes): Scope[] => (held === null ? [...scopes] : [...held]);
