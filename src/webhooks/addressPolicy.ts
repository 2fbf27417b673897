import net from 'node:net';
import ipaddr from 'ipaddr.js';

// Deliveries reach only public addresses (SSRF). The operator's allow-list (WEBHOOK_ALLOW_PRIVATE_HOSTS)
// names the URL hosts that may be private anyway, e.g. a receiver on loopback: host names and IP
// addresses match the URL's host exactly, CIDR ranges match a URL whose host is an address in them.
// A name that is not allow-listed must resolve to public addresses only, checked at connection time.

export interface AllowList {
  hosts: string[];
  ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

export function parseAllowList(entries: string[]): AllowList {
  const isRange = (entry: string) => entry.includes('/') && ipaddr.isValidCIDR(entry);
  return {
    hosts: entries.filter((entry) => !isRange(entry)).map((entry) => (net.isIP(entry) ? ipaddr.process(entry).toString() : entry)),
    ranges: entries.filter(isRange).map((entry) => ipaddr.parseCIDR(entry)),
  };
}

/** The URL's host without IPv6 brackets or a trailing dot (`localhost.` is localhost), lower-case, addresses in canonical form. */
function hostOf(url: URL) {
  const host = url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '')
    .toLowerCase();
  return net.isIP(host) ? ipaddr.process(host).toString() : host;
}

export function isAllowListed(url: URL, allowList: AllowList) {
  const host = hostOf(url);
  if (allowList.hosts.includes(host)) return true;
  if (!net.isIP(host)) return false;
  const address = ipaddr.process(host);
  return allowList.ranges.some((range) => address.kind() === range[0].kind() && address.match(range));
}

/**
 * Why a webhook URL may not be used, known without a DNS lookup: a literal non-public address or a
 * localhost name. Other names are checked on the address actually connected to, at delivery.
 */
export function refusedAddress(url: URL, allowList: AllowList): string | undefined {
  if (isAllowListed(url, allowList)) return undefined;
  const host = hostOf(url);
  if (net.isIP(host)) {
    if (isPublicAddress(host)) return undefined;
    const range = ipaddr.process(host).range();
    return `url must not point to a ${range === 'unicast' ? 'non-public' : range} address`;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return 'url must not point to localhost';
  return undefined;
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * A public address: IPv4 unicast, or IPv6 global unicast (2000::/3) outside the special ranges. Forms
 * that embed an IPv4 address (IPv4-mapped are unwrapped; IPv4-compatible `::a9fe:a9fe`, NAT64, 6to4,
 * Teredo) are not public: they can lead to a private one.
 */
export function isPublicAddress(text: string): boolean {
  if (!ipaddr.isValid(text)) return false;
  const address = ipaddr.process(text);
  if (address.range() !== 'unicast') return false;
  return address.kind() === 'ipv4' || (address as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}
