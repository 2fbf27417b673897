import pino from 'pino';

// Structured JSON logs. Secrets never reach them: requests are logged by method, path and status only,
// and the redact list covers the fields where a key, token or PDF could otherwise appear.
export function createLogger(level: string, destination?: pino.DestinationStream) {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'signet' },
    redact: {
      paths: ['req.headers.authorization', 'apiKey', 'token', 'secret', 'content', '*.apiKey', '*.token', '*.secret', '*.content'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export type Logger = ReturnType<typeof createLogger>;

/** Where one-time start-up work says what it does: the service's logger, or stderr for the CLI. */
export interface ProgressLog {
  info(details: object, message: string): void;
}

// A run of 40 or more characters of a token's alphabet (a character may be percent-encoded): signing
// links, password-reset and other e-mailed links carry 43, API keys more; our ids have at most 31.
const SECRET_LIKE = /(?:[A-Za-z0-9_-]|%[0-9A-Fa-f]{2}){40,}/g;
// A segment whose next segment is a link's token whatever it looks like (a token one character short
// is still most of a token): /sign/<token>, /embed/<token>, /app/password/reset/<token>.
const TOKEN_BEFORE = /^(sign|embed|reset)$/i;

/**
 * A request path (or URL) as it may be logged or echoed: link tokens, and anything shaped like one,
 * replaced by `[redacted]`; the query's values likewise. Every log line and message that shows a path
 * uses this, so a signing link or reset link in a log opens nothing.
 */
export function loggablePath(pathOrUrl: string): string {
  const queryAt = pathOrUrl.indexOf('?');
  const path = queryAt === -1 ? pathOrUrl : pathOrUrl.slice(0, queryAt);
  const segments = path.split('/');
  const redacted = segments.map((segment, index) =>
    index > 0 && TOKEN_BEFORE.test(segments[index - 1]) && segment ? '[redacted]' : segment.replace(SECRET_LIKE, '[redacted]'),
  );
  const query = queryAt === -1 ? '' : `?${pathOrUrl.slice(queryAt + 1).replace(/=[^&]*/g, '=[redacted]')}`;
  return redacted.join('/') + query;
}
