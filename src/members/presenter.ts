import type { Invitation, Member } from './service';

export const presentMember = (member: Member) => ({ id: member.id, email: member.email, role: member.role, joinedAt: member.joinedAt.toISOString() });

export const presentInvitation = (invitation: Invitation) => ({
  id: invitation.id,
  email: invitation.email,
  role: invitation.role,
  invitedBy: invitation.invitedBy,
  createdAt: invitation.createdAt.toISOString(),
  expiresAt: invitation.expiresAt.toISOString(),
});
