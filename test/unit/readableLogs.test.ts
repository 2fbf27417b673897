import { expect } from 'chai';
import { createLogger, logDestinationFor, readableLogLine, readableLogStream } from '../../src/logger';

// `npm start` outside production logs a line a person reads; production keeps pino's JSON lines.

function readableLogger() {
  const lines: string[] = [];
  const logger = createLogger('info', readableLogStream({ write: (text: string) => lines.push(text) }));
  return { logger, lines };
}

describe('readable logs', () => {
  it('show a request as its time (UTC), method, path, status and duration', () => {
    const { logger, lines } = readableLogger();
    logger.child({ requestId: 'req-1' }).info({ method: 'POST', path: '/api/v1/documents', status: 201, ms: 12.4, accountId: 'acc_1' }, 'request');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^\d{2}:\d{2}:\d{2} POST \/api\/v1\/documents 201 12ms\n$/);
    const at = Date.parse('2026-12-01T23:04:05.678Z');
    const json = JSON.stringify({ level: 30, time: at, service: 'signet', msg: 'request', method: 'GET', path: '/verify', status: 200, ms: 0.4 });
    expect(readableLogLine(json)).to.equal('23:04:05 GET /verify 200 0ms');
  });

  it('show another line as its level, message and fields, an error with its stack, and still redact secrets', () => {
    const { logger, lines } = readableLogger();
    logger.warn({ component: 'temporal', token: 'a-secret-token' }, 'slow poll');
    logger.error({ err: new Error('database gone') }, 'unhandled error');
    expect(lines[0]).to.match(/^\d{2}:\d{2}:\d{2} WARN slow poll \{"component":"temporal","token":"\[redacted\]"\}\n$/);
    expect(lines[1]).to.match(/^\d{2}:\d{2}:\d{2} ERROR unhandled error\nError: database gone\n\s+at /);
    expect(lines.join('')).to.not.contain('a-secret-token').and.not.contain('"level"');
  });

  it('are what npm start writes outside production; production writes pino’s JSON to stdout', () => {
    expect(logDestinationFor('production')).to.equal(undefined);
    expect(logDestinationFor('development')).to.have.property('write').that.is.a('function');
  });
});
