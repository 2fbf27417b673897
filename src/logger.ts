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
