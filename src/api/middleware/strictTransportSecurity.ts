import type { Middleware } from 'koa';
import type { Config } from '../../config';

/**
 * In production behind an https PUBLIC_URL, every response tells browsers to reach this host (and its
 * subdomains) over HTTPS only, for a year. Not otherwise: a development server or an http PUBLIC_URL
 * would be made unreachable to a browser that once saw it over HTTPS.
 */
export function strictTransportSecurity(config: Pick<Config, 'NODE_ENV' | 'publicUrl'>): Middleware {
  const enabled = config.NODE_ENV === 'production' && new URL(config.publicUrl).protocol === 'https:';
  return async (ctx, next) => {
    if (enabled) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    await next();
  };
}
