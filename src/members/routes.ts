import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { routesOn } from '../api/route';
import type { RouteDeps } from '../api/routeDeps';
import { memberOf } from '../domain/actors';
import { currentActor } from '../events/actingAs';
import { invitationMailer } from './mail';
import { presentInvitation, presentMember } from './presenter';
import {
  InvitationCreateSchema,
  InvitationIdParams,
  InvitationListSchema,
  InvitationSchema,
  MemberIdParams,
  MemberListSchema,
  MemberSchema,
  MemberUpdateSchema,
} from './schema';
import { changeRole, inviteMember, listInvitations, listMembers, removeMember, revokeInvitation } from './service';

// An account's members through the API: listing them takes account:read; changing them a key with every
// scope, as keys and webhooks do (src/api/scopes.ts). Handing the account on is the owner's, in the console.
const tag = 'Members';

export function memberRoutes({ router, db, config, openapi, idempotency }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const route = routesOn({ router, openapi, idempotency });
  const sendInvitation = invitationMailer(db, config);
  const byKey = { apiKey: true } as const;

  route(
    {
      method: 'get',
      path: '/members',
      operationId: 'listMembers',
      tag,
      summary: 'List the account’s members and their roles, the owner first',
      response: MemberListSchema,
      responseDescription: 'Every member of the account',
      errors: [401, 403],
    },
    async (_input, ctx) => ({ data: (await listMembers(db, account(ctx).id)).map(presentMember) }),
  );

  route(
    {
      method: 'patch',
      path: '/members/{id}',
      operationId: 'updateMember',
      tag,
      summary: 'Change a member’s role',
      description: 'The owner’s role changes only when they hand the account on (409). The keys the member made follow their new role at once.',
      params: MemberIdParams,
      body: MemberUpdateSchema,
      response: MemberSchema,
      responseDescription: 'The member with their new role',
      errors: [400, 401, 403, 404, 409],
    },
    async ({ params, body }, ctx) => presentMember(await changeRole(db, account(ctx).id, byKey, params.id, body.role)),
  );

  route(
    {
      method: 'delete',
      path: '/members/{id}',
      operationId: 'removeMember',
      tag,
      summary: 'Remove a member: their sessions end at once and the API keys they made are revoked',
      description: 'What they did stays attributed to them. The owner cannot be removed (409).',
      params: MemberIdParams,
      response: MemberSchema,
      responseDescription: 'The member removed',
      errors: [401, 403, 404, 409],
    },
    async ({ params }, ctx) => presentMember(await removeMember(db, account(ctx).id, byKey, params.id)),
  );

  route(
    {
      method: 'get',
      path: '/invitations',
      operationId: 'listInvitations',
      tag,
      summary: 'List the invitations not yet accepted or revoked, newest first',
      response: InvitationListSchema,
      responseDescription: 'The pending invitations (an expired one stays until revoked or replaced)',
      errors: [401, 403],
    },
    async (_input, ctx) => ({ data: (await listInvitations(db, account(ctx).id)).map(presentInvitation) }),
  );

  route(
    {
      method: 'post',
      path: '/invitations',
      operationId: 'createInvitation',
      tag,
      summary: 'Invite someone by e-mail to join the account with a role',
      description:
        'The link e-mailed works once, for seven days; following it proves the address. A new invitation to the same address replaces the pending one. 409 when the address is a member already or signs in to another account.',
      body: InvitationCreateSchema,
      status: 201,
      response: InvitationSchema,
      responseDescription: 'Created, and its e-mail sent',
      errors: [400, 401, 403, 409, 429],
    },
    async ({ body }, ctx) => {
      const inviter = memberOf(currentActor())?.email ?? null;
      const { invitation, token } = await inviteMember(db, account(ctx), { ...byKey, email: inviter }, body, config.RATE_LIMIT_MULTIPLIER);
      // The invitation exists either way: a mail that failed goes again with a new invitation to the address.
      await sendInvitation(account(ctx), invitation, token).catch((error) => ctx.state.log?.warn({ err: error }, 'invitation e-mail not sent'));
      return presentInvitation(invitation);
    },
  );

  route(
    {
      method: 'delete',
      path: '/invitations/{id}',
      operationId: 'revokeInvitation',
      tag,
      summary: 'Revoke an invitation: its link stops working',
      description: 'An invitation accepted or revoked already is a 409; an acceptance and a revocation at the same moment have one outcome.',
      params: InvitationIdParams,
      response: InvitationSchema,
      responseDescription: 'The revoked invitation',
      errors: [401, 403, 404, 409],
    },
    async ({ params }, ctx) => presentInvitation(await revokeInvitation(db, account(ctx).id, params.id)),
  );
}
