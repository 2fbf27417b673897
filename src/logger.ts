import pino from 'pino';

// Structured JSON logs. Secrets never reach them: the redact list covers the places they could appear.
export function createLogger(level: string) {
  return pino({
    level,
    base: { service: 'signet' },
    redact: {
      paths: ['req.headers.authorization', 'apiKey', 'token', 'secret', 'content', '*.apiKey', '*.token', '*.secret'],
      censor: '[redacted]',
    },
  });
}

export type Logger = ReturnType<typeof createLogger>;
