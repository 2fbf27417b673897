import crypto from 'node:crypto';
import zlib from 'node:zlib';
import type { Middleware } from 'koa';
import { loggablePath, type Logger } from '../../logger';
import { MAX_FORM_FIELDS } from './body';
import { AppError } from '../../errors';

// Gives every request an id (X-Request-Id, echoed when the caller sent a sane one), a child logger,
// one access log line, and the error rendering: {error, message, details?}, never a stack.
export function requestContext(logger: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = /^[\w.-]{1,64}$/.test(incoming) ? incoming : `req_${crypto.randomUUID().replaceAll('-', '')}`;
    const log = logger.child({ requestId });
    ctx.state.requestId = requestId;
    ctx.state.log = log;
    ctx.set('X-Request-Id', requestId);
    ctx.set('X-Content-Type-Options', 'nosniff'); // every response, errors included
    const started = process.hrtime.bigint();
    try {
      await next();
      if (ctx.body === undefined && ctx.status === 404) throw new AppError(404, 'not_found', `No route for ${ctx.method} ${loggablePath(ctx.path)}.`);
      if (ctx.body === undefined && ctx.status === 405) throw new AppError(405, 'method_not_allowed', `${ctx.method} is not allowed here.`);
    } catch (error) {
      renderError(ctx, error, requestId, log);
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info(
        { method: ctx.method, path: loggablePath(ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10, accountId: ctx.state.account?.id },
        'request',
      );
    }
  };
}

function renderError(ctx: Parameters<Middleware>[0], error: unknown, requestId: string, log: Logger) {
  const appError = toAppError(error);
  if (!appError) log.error({ err: error }, 'unhandled error');
  else if (appError.code === 'request_aborted') log.info({ reason: (error as Error).message }, 'client closed the request');
  const rendered = appError ?? new AppError(500, 'internal_error', 'Something went wrong on our side.');
  ctx.status = rendered.status;
  ctx.set(rendered.headers);
  ctx.body = errorBody(rendered, requestId);
}

/** The body an error is answered with, in the spec's shape. */
export const errorBody = ({ code, message, details, extra }: AppError, requestId: string) => ({
  error: code,
  message,
  ...(details ? { details } : {}),
  ...extra,
  requestId,
});

// Errors thrown by koa-body (co-body, formidable) carry an HTTP status of their own.
export function toAppError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  const status = (error as { status?: number; httpCode?: number })?.status ?? (error as { httpCode?: number })?.httpCode;
  const type = (error as { type?: string })?.type;
  // The client hung up mid-body: raw-body (JSON, raw PDF) and formidable (multipart, FormidableError code 1002).
  if (type === 'request.aborted' || type === 'stream.not.readable' || isFormidableAbort(error) || (error as { code?: string })?.code === 'ECONNRESET') {
    return new AppError(400, 'request_aborted', 'The client closed the request before its body arrived.');
  }
  const code = (error as { code?: unknown })?.code;
  // A body whose Content-Encoding does not decode: zlib's Z_DATA_ERROR and kin, or a brotli decoder error.
  if (typeof code === 'string' && (code.startsWith('Z_') || BROTLI_DECODER_ERRORS.has(code))) {
    return new AppError(400, 'validation_error', 'The request is invalid.', { details: ['body could not be decoded as its Content-Encoding says'] });
  }
  if (code === FORMIDABLE_MAX_FIELDS)
    return new AppError(400, 'validation_error', 'The request is invalid.', { details: [`body must have at most ${MAX_FORM_FIELDS} form fields`] });
  if (status === 413 || type === 'entity.too.large') return new AppError(413, 'payload_too_large', 'The request body is too large.');
  // co-body refuses a "__proto__" key anywhere in a JSON body (prototype poisoning): valid JSON, refused all the same.
  if (error instanceof SyntaxError && error.message === 'Object contains forbidden prototype property') {
    return new AppError(400, 'validation_error', 'The request is invalid.', { details: ['body must not contain a field named __proto__'] });
  }
  if (type === 'entity.parse.failed' || (error instanceof SyntaxError && status === 400)) {
    return new AppError(400, 'validation_error', 'The request is invalid.', { details: ['body must be valid JSON'] });
  }
  if (status === 415 || type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new AppError(415, 'unsupported_media_type', 'The request body encoding is not supported.');
  }
  if (status === 400 && typeof (error as Error).message === 'string') {
    return new AppError(400, 'validation_error', 'The request is invalid.', { details: [(error as Error).message] });
  }
  return undefined;
}

const FORMIDABLE_MAX_FIELDS = 1007;
// Node names a brotli decoder error ERR_ + its name less BROTLI_DECODER: ERR__ERROR_FORMAT_PADDING_1.
const BROTLI_DECODER_ERRORS = new Set(
  Object.keys(zlib.constants)
    .filter((name) => name.startsWith('BROTLI_DECODER_ERROR_'))
    .map((name) => `ERR_${name.slice('BROTLI_DECODER'.length)}`),
);

function isFormidableAbort(error: unknown) {
  const { code, httpCode } = (error ?? {}) as { code?: unknown; httpCode?: unknown };
  return code === 1002 && typeof httpCode === 'number';
}
