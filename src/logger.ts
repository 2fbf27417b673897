import pino from 'pino';

/** Of an error's message and stack, at most this much is logged. */
const ERROR_TEXT_CHARS = 4000;

/**
 * An error as a log shows it: its type, message, stack, code and cause, and nothing else it carries. An
 * error's own fields are payload, not diagnosis: an Elasticsearch client error holds the whole request
 * (a bulk of documents' text), an HTTP client's the body it sent. pino's default copies them all.
 */
export function loggableError(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error)) return value;
  const { code, statusCode, cause } = value as { code?: unknown; statusCode?: unknown; cause?: unknown };
  return {
    type: value.constructor?.name ?? value.name,
    message: String(value.message).slice(0, ERROR_TEXT_CHARS),
    stack: value.stack?.slice(0, ERROR_TEXT_CHARS),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(typeof statusCode === 'number' ? { statusCode } : {}),
    ...(cause !== undefined && depth < 3 ? { cause: loggableError(cause, depth + 1) } : {}),
  };
}

// Structured JSON logs. Secrets never reach them: requests are logged by method, path and status only,
// the redact list covers the fields where a key, token or PDF could otherwise appear, and errors are
// logged without what they carry (`err` ours, `error` the Temporal SDK's).
export function createLogger(level: string, destination?: pino.DestinationStream) {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'signet' },
    serializers: { err: loggableError, error: loggableError },
    redact: {
      paths: ['req.headers.authorization', 'apiKey', 'token', 'secret', 'content', '*.apiKey', '*.token', '*.secret', '*.content'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export type Logger = ReturnType<typeof createLogger>;

const levelNames: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * A JSON log line as a person reads it in a terminal: the time (UTC, as the console shows times), then a
 * request's method, path, status and duration, or another line's level, message, fields and stack.
 */
export function readableLogLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json);
  } catch {
    return json.trimEnd();
  }
  const { level, time, msg, pid: _pid, hostname: _hostname, service: _service, err, error, ...fields } = entry;
  const at = new Date(typeof time === 'number' ? time : Date.now()).toISOString().slice(11, 19);
  if (msg === 'request' && typeof fields.method === 'string')
    return `${at} ${fields.method} ${fields.path} ${fields.status} ${Math.round(Number(fields.ms))}ms`;
  const failure = (err ?? error) as { stack?: unknown; message?: unknown } | undefined;
  const extra = Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : '';
  const stack = typeof failure?.stack === 'string' ? `\n${failure.stack}` : failure?.message ? ` (${String(failure.message)})` : '';
  return `${at} ${levelNames[level as number] ?? String(level)} ${msg ?? ''}${extra}${stack}`;
}

/** A destination that writes each line readable (see readableLogLine) to `out`, stdout by default. */
export const readableLogStream = (out: { write(text: string): unknown } = process.stdout): pino.DestinationStream => ({
  write: (line: string) => void out.write(`${readableLogLine(line)}\n`),
});

/** Where `npm start` logs: pino's JSON on stdout in production (for a log collector), readable lines elsewhere. */
export const logDestinationFor = (nodeEnv: string): pino.DestinationStream | undefined => (nodeEnv === 'production' ? undefined : readableLogStream());

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
