// One error type: a code mapped to an HTTP status, rendered by the error middleware as {error, message, details?}.
export class AppError extends Error {
  readonly details?: string[];
  readonly headers: Record<string, string>;
  /** Extra top-level fields of the error body, e.g. the limit and reset time of a quota. */
  readonly extra: Record<string, unknown>;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options: { details?: string[]; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

export const validationError = (details: string[]) => new AppError(400, 'validation_error', 'The request is invalid.', { details });
export const unauthorized = (message = 'A valid API key is required: Authorization: Bearer <API_KEY>.') => new AppError(401, 'unauthorized', message);
export const quotaExceeded = (message: string, extra: Record<string, unknown>) => new AppError(403, 'quota_exceeded', message, { extra });
export const emailUnverified = (
  message = 'This account’s e-mail address is not confirmed yet: follow the link we e-mailed to it (the console at /app sends a new one). Until then the account can read but not create, change or send anything.',
) => new AppError(403, 'email_unverified', message);
export const insufficientScope = (message: string) => new AppError(403, 'insufficient_scope', message);
export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found.`);
export const conflict = (message: string) => new AppError(409, 'conflict', message);
export const idempotencyInProgress = () =>
  new AppError(409, 'idempotency_in_progress', 'A request with this Idempotency-Key is still running: try again shortly for its answer.', {
    headers: { 'Retry-After': '1' },
  });
export const idempotencyKeyReused = (
  message = 'This Idempotency-Key was given to another request (another method, path or body) in the last 24 hours: send a new request under a new key.',
) => new AppError(422, 'idempotency_key_reused', message);
export const payloadTooLarge = (limitBytes: number) => new AppError(413, 'payload_too_large', `The request body exceeds the limit of ${limitBytes} bytes.`);
export const unsupportedMediaType = (message: string) => new AppError(415, 'unsupported_media_type', message);
export const rateLimitExceeded = (message: string, headers: Record<string, string>) => new AppError(429, 'rate_limit_exceeded', message, { headers });
/** The rate-limit headers: the limit, what is left of it, and when its window frees one more (Unix seconds). */
export const rateLimitHeaders = ({ limit, remaining, resetAt }: { limit: number; remaining: number; resetAt: Date }) => ({
  'X-RateLimit-Limit': String(limit),
  'X-RateLimit-Remaining': String(Math.max(0, remaining)),
  'X-RateLimit-Reset': String(Math.ceil(resetAt.getTime() / 1000)),
});
/** Retry-After, in whole seconds from now (at least one). */
export const retryAfterHeader = (retryAt: Date) => ({ 'Retry-After': String(Math.max(1, Math.ceil((retryAt.getTime() - Date.now()) / 1000))) });
/** A 429 with the rate-limit headers and when to try again. */
export const hourlyLimitReached = (
  message: string,
  { limit, remaining, resetAt, retryAt }: { limit: number; remaining: number; resetAt: Date; retryAt: Date },
) => rateLimitExceeded(message, { ...retryAfterHeader(retryAt), ...rateLimitHeaders({ limit, remaining, resetAt }) });
export const serverBusy = (message: string, retryAfterSeconds = 1) =>
  new AppError(503, 'server_busy', message, { headers: { 'Retry-After': String(retryAfterSeconds) } });
export const searchUnavailable = () =>
  new AppError(503, 'search_unavailable', 'Search is unavailable for a moment; the rest of the API works. Try again shortly.', {
    headers: { 'Retry-After': '5' },
  });
