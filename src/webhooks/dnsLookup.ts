import dns from 'node:dns';
import type { LookupFunction } from 'node:net';

/**
 * The lookup of a webhook's host, through c-ares (DNS queries on the event loop, with a timeout) rather
 * than getaddrinfo: getaddrinfo runs on libuv's thread pool, of which DNS may hold only two threads, so
 * a few hosts whose name servers never answer (any account can name such a host) held every other
 * lookup of the process for the system resolver's whole timeout: the database's, Temporal's, the mail
 * server's, and `localhost` itself. Webhook hosts are public names; /etc/hosts is not theirs.
 */
export function webhookLookup(resolver = new dns.Resolver({ timeout: 2000, tries: 2 })): LookupFunction {
  const resolve = (family: 4 | 6, hostname: string) =>
    new Promise<dns.LookupAddress[]>((done) => {
      const answered = (error: Error | null, addresses: string[]) => done(error ? [] : addresses.map((address) => ({ address, family })));
      if (family === 4) resolver.resolve4(hostname, answered);
      else resolver.resolve6(hostname, answered);
    });
  async function addresses(hostname: string, family: number | undefined) {
    // localhost and its subdomains are loopback by definition (RFC 6761), whatever a name server says.
    if (/^(.+\.)?localhost\.?$/i.test(hostname))
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ].filter((found) => !family || found.family === family);
    const [v4, v6] = await Promise.all([family === 6 ? [] : resolve(4, hostname), family === 4 ? [] : resolve(6, hostname)]);
    return [...v4, ...v6];
  }
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family || undefined;
    void addresses(hostname, family).then((found) => {
      if (found.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }), '', 0);
      if (options.all) return (callback as unknown as (error: null, all: dns.LookupAddress[]) => void)(null, found);
      callback(null, found[0].address, found[0].family);
    });
  };
}
