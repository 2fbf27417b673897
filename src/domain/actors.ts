// Who did something on behalf of an account: a member in the console, or an API key (with the member who
// made it, when a member did). Written with each action (audit trail, events, a request's sent_by) as it
// was then, so that it stays attributed after the member leaves or the key is revoked.
export type Actor =
  { type: 'member'; id: string; email: string } | { type: 'api_key'; id: string; name: string; memberId: string | null; memberEmail: string | null };

/** The member who acted: themselves, or the member who made the key; null for no actor or a key no member made. */
export function memberOf(actor: Actor | null | undefined): { id: string; email: string } | null {
  if (actor?.type === 'member') return { id: actor.id, email: actor.email };
  return actor?.memberId && actor.memberEmail ? { id: actor.memberId, email: actor.memberEmail } : null;
}

/**
 * As the audit trail and the certificate of completion show it. No actor, or a key no member made (the
 * CLI's, those made before members), is the account, by its address: as every action was before members.
 */
export function actorLabel(actor: Actor | null | undefined, accountEmail: string): string {
  if (actor?.type === 'member') return actor.email;
  return actor?.memberEmail ? `API key “${actor.name}” of ${actor.memberEmail}` : accountEmail;
}
