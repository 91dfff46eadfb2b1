import { BlockList, isIP } from 'node:net';
import type { SsrfAllowlist } from '../../config/app-config.js';

/** A destination server tools may not reach; the message is safe to show to the model. */
export class SsrfRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SsrfRefusedError';
  }
}

/** Ranges that are not the public internet, each with the reason a refusal names. */
const NON_PUBLIC_V4: readonly [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const NON_PUBLIC_V6: readonly [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'discard'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

function blockList(
  ranges: readonly [string, number, string][],
  type: 'ipv4' | 'ipv6',
): [BlockList, string][] {
  return ranges.map(([network, prefix, reason]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, type);
    return [list, reason];
  });
}

const V4_RANGES = blockList(NON_PUBLIC_V4, 'ipv4');
const V6_RANGES = blockList(NON_PUBLIC_V6, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((group) => parseInt(group, 16)) : [];
  const left = parse(head);
  const right = parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

function v4FromGroups(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The IPv4 address an IPv6 address carries, for the forms that route to it: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
export function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (g.length !== 8) return undefined;
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return v4FromGroups(g[6], g[7]);
  if (zeros(0, 6) && (g[6] !== 0 || g[7] > 1)) return v4FromGroups(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4FromGroups(g[6], g[7]);
  if (g[0] === 0x2002) return v4FromGroups(g[1], g[2]);
  return undefined;
}

/** Why `address` is not a public internet address, or undefined when it is. */
export function nonPublicReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) return V4_RANGES.find(([list]) => list.check(address, 'ipv4'))?.[1];
  if (family !== 6) return 'not an IP address';
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) {
    const reason = nonPublicReason(v4);
    if (reason) return reason;
  }
  return V6_RANGES.find(([list]) => list.check(address, 'ipv6'))?.[1];
}

/**
 * Decides whether a server tool may connect to an address. Public addresses are allowed; any
 * other address only when the administrator allow-listed it by CIDR, by the host name the tool
 * asked for, or by `host:port`.
 */
export class SsrfPolicy {
  private readonly allowedNetworks = new BlockList();
  private readonly hosts: ReadonlySet<string>;
  private readonly hostPorts: ReadonlySet<string>;

  constructor(allowlist: SsrfAllowlist) {
    for (const cidr of allowlist.cidrs) {
      const [network, prefix] = cidr.split('/');
      this.allowedNetworks.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
    }
    this.hosts = new Set(allowlist.hosts);
    this.hostPorts = new Set(allowlist.hostPorts);
  }

  /** Throws SsrfRefusedError when `hostname:port`, resolved to `address`, may not be reached. */
  check(hostname: string, port: number, address: string): void {
    const reason = nonPublicReason(address);
    if (reason === undefined || this.allowed(hostname.toLowerCase(), port, address)) return;
    const where = hostname === address ? address : `${hostname} (${address})`;
    throw new SsrfRefusedError(
      `Refused to connect to ${where}: a ${reason} address that tools may not reach`,
    );
  }

  private allowed(hostname: string, port: number, address: string): boolean {
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    const v4 = family === 'ipv6' ? embeddedIpv4(address) : undefined;
    const hostPort = (host: string) => `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
    return (
      this.allowedNetworks.check(address, family) ||
      (v4 !== undefined && this.allowedNetworks.check(v4, 'ipv4')) ||
      this.hosts.has(hostname) ||
      this.hostPorts.has(hostPort(hostname)) ||
      this.hostPorts.has(hostPort(address)) ||
      (v4 !== undefined && this.hostPorts.has(hostPort(v4)))
    );
  }
}
