import type { Middleware } from 'koa';
import type { Config } from '../../config';
import { AppError } from '../../errors';

/** Bodies over this size (or of unknown size) must keep up the minimum rate; a smaller one is read before it matters. */
export const MIN_RATE_BODY_BYTES = 64 * 1024;

const timedOut = (message: string) => new AppError(408, 'request_timeout', message, { headers: { Connection: 'close' } });

const requestTimeout = (idleMs: number) => timedOut(`The request body stopped arriving: nothing was received for ${idleMs / 1000} s.`);

const requestTooSlow = (bytesPerSecond: number, minBytesPerSecond: number, windowMs: number) =>
  timedOut(
    `The request body arrived at ${Math.floor(bytesPerSecond)} bytes/s over the last ${windowMs / 1000} s, under the minimum of ${minBytesPerSecond} bytes/s.`,
  );

type Pace = Pick<Config, 'BODY_IDLE_TIMEOUT_MS' | 'BODY_MIN_BYTES_PER_SECOND' | 'BODY_RATE_WINDOW_MS'>;

/**
 * A body that stops arriving for BODY_IDLE_TIMEOUT_MS, or one over 64 KiB that arrives slower than
 * BODY_MIN_BYTES_PER_SECOND averaged over the last BODY_RATE_WINDOW_MS, fails its reader (the body
 * parser, or a handler reading the raw stream) with a 408, which is answered, and the connection is
 * closed: a stalled or trickling client holds no upload slot and no parser for long. A byte every few
 * seconds keeps an idle timer alive; it does not keep up a rate. The clocks run only while someone
 * reads the body, so a request waiting for an upload slot is not timed out for the wait, and the rate
 * is first judged a whole window after reading began.
 *
 * Progress is read from the socket's byte count rather than from `data` listeners, which would start
 * the stream flowing before its reader is there.
 */
export function readDeadline({ BODY_IDLE_TIMEOUT_MS: idleMs, BODY_MIN_BYTES_PER_SECOND: minRate, BODY_RATE_WINDOW_MS: windowMs }: Pace): Middleware {
  const tickMs = Math.max(10, Math.min(1000, idleMs / 4, windowMs / 4));
  return async (ctx, next) => {
    const req = ctx.req;
    if (req.complete || !(ctx.request.length || ctx.get('Transfer-Encoding'))) return next();
    const paced = ctx.request.length === undefined || ctx.request.length > MIN_RATE_BODY_BYTES;
    let seen = req.socket.bytesRead;
    let quietSince = Date.now();
    /** Byte counts while the body is read, oldest first: the first is the start of the window. */
    let samples: { at: number; read: number }[] = [];
    const fail = (error: AppError) => {
      clearInterval(timer);
      // The reader rejects with this error; with no reader there is nobody to answer.
      if (req.listenerCount('error') > 0) req.emit('error', error);
      else req.destroy();
    };
    const timer = setInterval(() => {
      if (req.complete) return clearInterval(timer);
      const now = Date.now();
      const read = req.socket.bytesRead;
      if (req.readableFlowing === null) {
        // Not read yet (waiting for a slot, say): neither clock runs.
        [seen, quietSince, samples] = [read, now, []];
        return;
      }
      if (read !== seen) [seen, quietSince] = [read, now];
      else if (now - quietSince >= idleMs) return fail(requestTimeout(idleMs));
      if (!paced) return;
      samples.push({ at: now, read });
      while (samples.length > 1 && now - samples[1].at >= windowMs) samples.shift();
      const [start] = samples;
      if (now - start.at < windowMs) return;
      const rate = ((read - start.read) * 1000) / (now - start.at);
      if (rate < minRate) fail(requestTooSlow(rate, minRate, windowMs));
    }, tickMs);
    try {
      await next();
    } finally {
      clearInterval(timer);
    }
  };
}
