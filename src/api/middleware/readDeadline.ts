import type { Middleware } from 'koa';
import { AppError } from '../../errors';

export const requestTimeout = (idleMs: number) =>
  new AppError(408, 'request_timeout', `The request body stopped arriving: nothing was received for ${idleMs / 1000} s.`, {
    headers: { Connection: 'close' },
  });

/**
 * A body that stops arriving for `idleMs` while it is read fails its reader (the body parser, or a
 * handler reading the raw stream) with a 408, which is answered, and the connection is closed: a
 * stalled client holds no upload slot and no parser. The clock runs only while someone reads the body,
 * so a request waiting for an upload slot is not timed out for the wait.
 *
 * Progress is read from the socket's byte count rather than from `data` listeners, which would start
 * the stream flowing before its reader is there.
 */
export function readDeadline(idleMs: number): Middleware {
  return async (ctx, next) => {
    const req = ctx.req;
    if (req.complete || !(ctx.request.length || ctx.get('Transfer-Encoding'))) return next();
    let seen = req.socket.bytesRead;
    let quietSince = Date.now();
    const timer = setInterval(
      () => {
        if (req.complete) return clearInterval(timer);
        const read = req.socket.bytesRead;
        if (read !== seen || req.readableFlowing === null) {
          seen = read;
          quietSince = Date.now();
          return;
        }
        if (Date.now() - quietSince < idleMs) return;
        clearInterval(timer);
        // The reader rejects with this error; with no reader there is nobody to answer.
        if (req.listenerCount('error') > 0) req.emit('error', requestTimeout(idleMs));
        else req.destroy();
      },
      Math.max(10, Math.min(1000, idleMs / 4)),
    );
    try {
      await next();
    } finally {
      clearInterval(timer);
    }
  };
}
