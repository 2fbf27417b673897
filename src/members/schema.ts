import { idParam } from '../api/route';
import { z } from '../api/validation';
import { memberRoles, roles } from '../domain/roles';

const at = z.string().openapi({ format: 'date-time' });

const RoleSchema = z.enum(roles).openapi('Role', {
  description:
    'owner: everything, and hands the account on; admin: members, API keys, webhooks, branding and all a sender does; sender: documents, requests, templates, bulk sends; viewer: reads only.',
});
const MemberRoleSchema = z
  .enum(memberRoles)
  .openapi('MemberRole', { description: 'A role an invitation or a change may give: the owner only ever hands the account on.' });

export const MemberSchema = z
  .object({
    id: z.string().openapi({ example: 'user_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    email: z.string(),
    role: RoleSchema,
    joinedAt: at,
  })
  .openapi('Member');

export const MemberListSchema = z.object({ data: z.array(MemberSchema) }).openapi('MemberList');

export const MemberUpdateSchema = z.object({ role: MemberRoleSchema }).openapi('MemberUpdate');

export const MemberIdParams = z.object({ id: idParam('user', 'member') });

export const InvitationSchema = z
  .object({
    id: z.string().openapi({ example: 'inv_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    email: z.string(),
    role: MemberRoleSchema,
    invitedBy: z.string().nullable().openapi({ description: 'Who invited: a member’s address, or the account’s for a key no member made.' }),
    createdAt: at,
    expiresAt: at.openapi({ description: 'The link works once, until then (seven days).' }),
  })
  .openapi('Invitation');

export const InvitationListSchema = z.object({ data: z.array(InvitationSchema) }).openapi('InvitationList');

export const InvitationCreateSchema = z
  .object({ email: z.email().max(320), role: MemberRoleSchema })
  .openapi('InvitationCreate', { example: { email: 'dana@example.com', role: 'sender' } });

export const InvitationIdParams = z.object({ id: idParam('invitation', 'invitation') });
