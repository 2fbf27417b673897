// Prefixed, time-sortable identifiers (TypeID): the prefix tells what a thing is at a glance.
export const idPrefixes = {
  account: 'acct',
  apiKey: 'key',
  document: 'doc',
  signingRequest: 'sr',
  signer: 'sgr',
  template: 'tpl',
  webhook: 'wh',
  delivery: 'whd',
  event: 'evt',
  upload: 'upl',
  bulkSend: 'bulk',
  user: 'user',
  invitation: 'inv',
} as const;

export type IdKind = keyof typeof idPrefixes;

/** The shape of an id of one kind: its prefix and a TypeID suffix. */
export const idPattern = (kind: IdKind) => new RegExp(`^${idPrefixes[kind]}_[0-7][0-9a-hjkmnp-tv-z]{25}$`);

export function isId(kind: IdKind, value: string): boolean {
  return idPattern(kind).test(value);
}
