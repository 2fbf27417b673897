import { requiredScopes } from '../api/scopes';
import { missingScopes } from '../domain/scopes';
import { scopesOfRole, type Role } from '../domain/roles';

// What a member's role lets them do in the console, by the REST API's rules (src/api/scopes.ts): each area
// of the console is the API's resource of the same name, a GET reads it (but a form to make one, /new,
// writes), anything else writes. A page outside these areas (log out, the address's confirmation) is any
// member's.
const areas: [prefix: string, tag: string][] = [
  ['/app/documents', 'Documents'],
  ['/app/requests', 'Signing requests'],
  ['/app/templates', 'Templates'],
  ['/app/bulk-sends', 'Bulk sends'],
  ['/app/webhooks', 'Webhooks'],
  ['/app/settings/api-keys', 'API keys'],
  ['/app/settings/members', 'Members'],
  ['/app/settings/branding', 'Account'],
  ['/app/settings/plan', 'Account'],
];

const areaOf = (path: string) => areas.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`));

/** Whether a member with this role may make this request of the console. */
export function roleAllows(role: Role, method: string, path: string): boolean {
  const area = path === '/app' || path === '/app/' ? ['/app', 'Dashboard'] : areaOf(path);
  if (!area) return true;
  const writes = (method !== 'GET' && method !== 'HEAD') || path.endsWith('/new');
  const required = requiredScopes({ tag: area[1], method: writes ? 'post' : 'get', path });
  return missingScopes(scopesOfRole(role), required).length === 0;
}
