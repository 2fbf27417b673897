import type { Context } from 'koa';
import { withArticle } from '../domain/words';
import { idParam } from '../api/route';
import { parseInput, z } from '../api/validation';
import { managesAccount, memberRoles, roleDescriptions, roles, type Role } from '../domain/roles';
import { AppError } from '../errors';
import { invitationMailer } from '../members/mail';
import { InvitationCreateSchema, MemberUpdateSchema } from '../members/schema';
import { LinkTokenParams } from '../members/linkTokens';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, NewPasswordSchema } from '../members/passwords';
import {
  acceptInvitation,
  changeRole,
  findInvitation,
  INVITATION_DAYS,
  inviteMember,
  listInvitations,
  listMembers,
  removeMember,
  revokeInvitation,
  transferOwnership,
  type Invitation,
  type Member,
} from '../members/service';
import { getAccount } from '../accounts/service';
import { html } from './html';
import { csrfField, dateTime, layout, listTable, option, problemList, type Frame } from './pages';
import type { ConsoleKit } from './kit';

// The account's people (/app/settings/members): every member sees who is in it and may leave; the owner and
// admins invite, change roles and remove; the owner hands the account on. An invitation's link
// (/app/invitations/:token) needs no login: following it proves the address, and the invitee sets a password.

const MemberParams = z.object({ id: idParam('user', 'is not a member id') });
const InvitationParams = z.object({ id: idParam('invitation', 'is not an invitation id') });

interface MembersView {
  me: { id: string; role: Role };
  members: Member[];
  invitations: Invitation[];
  notice?: string;
  problems?: string[];
  values?: { email?: string; role?: string };
}

function roleCell(frame: Frame, view: MembersView, member: Member) {
  if (member.role === 'owner' || !managesAccount(view.me.role)) return html`${member.role}`;
  return html`<form method="post" action="/app/settings/members/${member.id}/role" class="inline">
    ${csrfField(frame.csrf)}
    <label class="visually-hidden" for="role-${member.id}">Role of ${member.email}</label>
    <select id="role-${member.id}" name="role">${memberRoles.map((role) => option(role, role, role === member.role))}</select>
    <button type="submit">Change</button></form>`;
}

function actionsCell(frame: Frame, view: MembersView, member: Member) {
  if (member.role === 'owner') return html`<span class="hint">The owner</span>`;
  if (member.id === view.me.id) {
    return html`<form method="post" action="/app/account/leave" class="inline" data-confirm="Leave this account? You will be logged out, and the API keys you made revoked.">${csrfField(frame.csrf)}<button type="submit" class="danger">Leave</button></form>`;
  }
  if (!managesAccount(view.me.role)) return '';
  return html`<form method="post" action="/app/settings/members/${member.id}/remove" class="inline" data-confirm="Remove ${member.email}? Their sessions end now and the API keys they made are revoked.">${csrfField(frame.csrf)}<button type="submit" class="danger" aria-label="Remove ${member.email}">Remove</button></form>`;
}

export function membersPage(frame: Frame, view: MembersView) {
  const manages = managesAccount(view.me.role);
  const others = view.members.filter((member) => member.id !== view.me.id);
  const rows = view.members.map(
    (member) => html`<tr><td>${member.email}${member.id === view.me.id ? html` <span class="hint">(you)</span>` : ''}</td>
      <td>${roleCell(frame, view, member)}</td><td>${dateTime(member.joinedAt)}</td><td>${actionsCell(frame, view, member)}</td></tr>`,
  );
  const invitationRows = view.invitations.map(
    (invitation) => html`<tr><td>${invitation.email}</td><td>${invitation.role}</td><td>${dateTime(invitation.expiresAt)}</td>
      <td>${manages ? html`<form method="post" action="/app/settings/members/invitations/${invitation.id}/revoke" class="inline">${csrfField(frame.csrf)}<button type="submit" aria-label="Revoke the invitation of ${invitation.email}">Revoke</button></form>` : ''}</td></tr>`,
  );
  return layout(
    frame,
    'Members',
    html`<h1>Members</h1>
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    ${problemList(view.problems ?? [])}
    ${listTable('Members of the account', ['E-mail', 'Role', 'Joined', ''], rows)}
    <dl class="roles">${roles.map((role) => html`<dt>${role}</dt><dd>${roleDescriptions[role]}</dd>`)}</dl>
    ${
      manages
        ? html`<section class="card stack" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite someone</h2>
      <form method="post" action="/app/settings/members/invitations" class="stack">
        ${csrfField(frame.csrf)}
        <label for="invite-email">E-mail</label>
        <input id="invite-email" name="email" type="email" required maxlength="320" autocomplete="off" value="${view.values?.email ?? ''}">
        <label for="invite-role">Role</label>
        <select id="invite-role" name="role">${memberRoles.map((role) => option(role, role, role === (view.values?.role ?? 'sender')))}</select>
        <p class="hint">The link we e-mail works once, for ${INVITATION_DAYS} days.</p>
        <button type="submit" class="primary">Send the invitation</button>
      </form>
    </section>
    <h2>Invitations not yet accepted</h2>
    ${invitationRows.length ? listTable('Pending invitations', ['E-mail', 'Role', 'Expires', ''], invitationRows) : html`<p>None.</p>`}`
        : ''
    }
    ${
      view.me.role === 'owner' && others.length
        ? html`<section class="card stack" aria-labelledby="transfer-heading">
      <h2 id="transfer-heading">Hand the account on</h2>
      <form method="post" action="/app/settings/members/transfer" class="stack" data-confirm="Make this member the owner? You become an admin.">
        ${csrfField(frame.csrf)}
        <label for="transfer-to">New owner</label>
        <select id="transfer-to" name="memberId">${others.map((member) => option(member.id, member.email, false))}</select>
        <p class="hint">An account has exactly one owner: you become an admin.</p>
        <button type="submit" class="danger">Make them the owner</button>
      </form>
    </section>`
        : ''
    }`,
  );
}

function invitationPage(frame: Frame, view: { accountName: string; invitation: Invitation; problems?: string[] }) {
  const { invitation } = view;
  return layout(
    frame,
    'Join an account',
    html`<h1>Join ${view.accountName}</h1>
    <p>${invitation.invitedBy ?? view.accountName} invited <strong>${invitation.email}</strong> to join as ${withArticle(invitation.role)}: ${roleDescriptions[invitation.role]}</p>
    ${problemList(view.problems ?? [])}
    <form method="post" class="card stack">
      ${csrfField(frame.csrf)}
      <label for="password">Choose a password</label>
      <input id="password" name="password" type="password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="${MAX_PASSWORD_LENGTH}" autocomplete="new-password" aria-describedby="password-hint">
      <p id="password-hint" class="hint">At least ${MIN_PASSWORD_LENGTH} characters. You log in with ${invitation.email}.</p>
      <button type="submit" class="primary">Join</button>
    </form>`,
  );
}

const invalidInvitation = (frame: Frame) =>
  layout(
    frame,
    'Invitation not valid',
    html`<h1>This invitation does not work</h1>
    <p class="alert" role="alert">The link is unknown, was already used or revoked, or is more than ${INVITATION_DAYS} days old. Ask whoever invited you for a new one.</p>`,
  );

export function memberPages({ router, deps, requireLogin, frame, page, account, user, form, seeOther, sessions }: ConsoleKit) {
  const { db, config } = deps;
  const sendInvitation = invitationMailer(db, config);
  const here = (ctx: Context) => frame(ctx, '/app/settings/members');
  const me = (ctx: Context) => user(ctx)!;
  const show = async (ctx: Context, extra: Partial<MembersView> = {}, status = 200) => {
    const [members, invitations] = await Promise.all([listMembers(db, account(ctx).id), listInvitations(db, account(ctx).id)]);
    page(ctx, membersPage(here(ctx), { me: me(ctx), members, invitations, ...extra }), status);
  };
  const notices: Record<string, string> = {
    invited: 'Invitation sent.',
    changed: 'Role changed.',
    removed: 'Member removed.',
    revoked: 'Invitation revoked.',
    transferred: 'You handed the account on; you are an admin now.',
  };
  const done = (ctx: Context, notice: string) => seeOther(ctx, `/app/settings/members?done=${notice}`);

  router.get('/settings/members', requireLogin, (ctx) => show(ctx, { notice: notices[String(ctx.query.done)] }));

  router.post('/settings/members/invitations', requireLogin, async (ctx) => {
    const values = form(ctx);
    const parsed = InvitationCreateSchema.safeParse({ email: values.email?.trim(), role: values.role });
    if (!parsed.success) return show(ctx, { problems: ['Give an e-mail address and one of the roles offered.'], values }, 400);
    try {
      const { invitation, token } = await inviteMember(
        db,
        account(ctx),
        { memberId: me(ctx).id, email: me(ctx).email },
        parsed.data,
        config.RATE_LIMIT_MULTIPLIER,
      );
      await sendInvitation(account(ctx), invitation, token).catch((error) => ctx.state.log?.warn({ err: error }, 'invitation e-mail not sent'));
      done(ctx, 'invited');
    } catch (error) {
      if (!(error instanceof AppError) || (error.status !== 409 && error.status !== 429)) throw error;
      ctx.set(error.headers); // a 429's Retry-After
      await show(ctx, { problems: [error.message], values }, error.status);
    }
  });

  router.post('/settings/members/invitations/:id/revoke', requireLogin, async (ctx) => {
    const { id } = parseInput(InvitationParams, ctx.params);
    await revokeInvitation(db, account(ctx).id, id);
    done(ctx, 'revoked');
  });

  router.post('/settings/members/:id/role', requireLogin, async (ctx) => {
    const { id } = parseInput(MemberParams, ctx.params);
    const { role } = parseInput(MemberUpdateSchema, { role: form(ctx).role });
    await changeRole(db, account(ctx).id, { memberId: me(ctx).id }, id, role);
    done(ctx, 'changed');
  });

  router.post('/settings/members/:id/remove', requireLogin, async (ctx) => {
    const { id } = parseInput(MemberParams, ctx.params);
    await removeMember(db, account(ctx).id, { memberId: me(ctx).id }, id);
    done(ctx, 'removed');
  });

  router.post('/settings/members/transfer', requireLogin, async (ctx) => {
    const { id } = parseInput(MemberParams, { id: form(ctx).memberId ?? '' });
    await transferOwnership(db, account(ctx).id, me(ctx).id, id);
    done(ctx, 'transferred');
  });

  // Any member may leave (the owner hands the account on first): outside /settings/members, which is an admin's to change.
  router.post('/account/leave', requireLogin, async (ctx) => {
    await removeMember(db, account(ctx).id, { memberId: me(ctx).id }, me(ctx).id);
    await sessions.end(ctx, undefined);
    seeOther(ctx, '/app/login');
  });

  // --- Accepting an invitation: no login; the link proves the address ---
  const invitationOf = async (ctx: Context) => {
    const parsed = LinkTokenParams.safeParse(ctx.params);
    const invitation = parsed.success ? await findInvitation(db, parsed.data.token) : null;
    if (!parsed.success || !invitation) return undefined;
    const { name, email } = await getAccount(db, invitation.accountId);
    return { token: parsed.data.token, invitation, accountName: name ?? email };
  };

  router.get('/invitations/:token', async (ctx) => {
    const found = await invitationOf(ctx);
    page(ctx, found ? invitationPage(frame(ctx), found) : invalidInvitation(frame(ctx)), found ? 200 : 404);
  });

  router.post('/invitations/:token', async (ctx) => {
    const found = await invitationOf(ctx);
    if (!found) return page(ctx, invalidInvitation(frame(ctx)), 404);
    const parsed = NewPasswordSchema.safeParse({ password: form(ctx).password });
    if (!parsed.success)
      return page(
        ctx,
        invitationPage(frame(ctx), { ...found, problems: [`The password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`] }),
        400,
      );
    try {
      const joined = await acceptInvitation(db, found.token, parsed.data.password);
      if (!joined) return page(ctx, invalidInvitation(frame(ctx)), 404); // revoked or accepted at this moment
      await sessions.end(ctx, undefined); // whoever was logged in in this browser
      await sessions.start(ctx, joined.id);
      seeOther(ctx, '/app');
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 409) throw error;
      page(ctx, invitationPage(frame(ctx), { ...found, problems: [error.message] }), 409);
    }
  });
}
