// Plans, their monthly quotas and hourly rate limits (the table in docs/api.md).
export const planNames = ['free', 'pro', 'business'] as const;
export type Plan = (typeof planNames)[number];

export const rateLimitedOperations = ['POST /documents', 'POST /signatures', 'GET /templates', 'POST /webhooks'] as const;
export type RateLimitedOperation = (typeof rateLimitedOperations)[number];

export interface PlanLimits {
  /** null = unlimited */
  documentsPerMonth: number | null;
  templates: number | null;
  webhooks: boolean;
  rateLimitsPerHour: Record<RateLimitedOperation, number>;
  /**
   * E-mails sent for the account's signing requests (invitations, reminders, closing mails) per sliding
   * hour: at least a full request's invitations (50 signers) twice over, so any request fits an hour.
   */
  emailsPerHour: number;
}

export const plans: Record<Plan, PlanLimits> = {
  free: {
    documentsPerMonth: 5,
    templates: 3,
    webhooks: false,
    rateLimitsPerHour: { 'POST /documents': 10, 'POST /signatures': 10, 'GET /templates': 30, 'POST /webhooks': 5 },
    emailsPerHour: 100,
  },
  pro: {
    documentsPerMonth: 25,
    templates: 10,
    webhooks: false,
    rateLimitsPerHour: { 'POST /documents': 100, 'POST /signatures': 100, 'GET /templates': 300, 'POST /webhooks': 50 },
    emailsPerHour: 1_000,
  },
  business: {
    documentsPerMonth: null,
    templates: null,
    webhooks: true,
    rateLimitsPerHour: { 'POST /documents': 1000, 'POST /signatures': 1000, 'GET /templates': 3000, 'POST /webhooks': 500 },
    emailsPerHour: 10_000,
  },
};

/** An operation's limit per hour on a plan: what the REST API's rate limiter enforces and the plan page shows. */
export const hourlyLimit = (plan: Plan, operation: RateLimitedOperation, multiplier: number) =>
  Math.ceil(plans[plan].rateLimitsPerHour[operation] * multiplier);

/** The plan's e-mails per hour, raised like every limit by RATE_LIMIT_MULTIPLIER. */
export const hourlyEmailLimit = (plan: Plan, multiplier: number) => Math.ceil(plans[plan].emailsPerHour * multiplier);

/** Monthly quotas reset at the start of each calendar month, UTC. */
export function monthWindow(now = new Date()) {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end };
}
