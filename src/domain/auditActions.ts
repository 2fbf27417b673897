// What each step of a signing request's audit trail is called: the API and the audit-trail download keep
// the code, the console and the certificate of completion show the label.
export const auditActionLabels = {
  created: 'Request created',
  invitation_sent: 'Invitation e-mailed',
  reminder_sent: 'Reminder e-mailed',
  embedded_session_opened: 'Embedded signing opened',
  verification_code_sent: 'Verification code e-mailed',
  verification_succeeded: 'Identity verified',
  verification_failed: 'Wrong verification code',
  verification_locked: 'Verification locked after wrong codes',
  verification_released: 'Verification unlocked by the sender',
  viewed: 'Opened the documents',
  approved: 'Approved',
  signed: 'Signed',
  declined: 'Declined',
  cancelled: 'Request cancelled',
  expired: 'Request expired',
  completed: 'Request completed',
  archive_renewed: 'Archive timestamp renewed',
} as const;

export type AuditAction = keyof typeof auditActionLabels;

/** A step's label; an action this list does not know yet is shown as its code rather than hidden. */
export const auditActionLabel = (action: string): string => (Object.hasOwn(auditActionLabels, action) ? auditActionLabels[action as AuditAction] : action);
