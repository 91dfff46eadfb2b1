import { ConfigError, loadConfig } from '../../config/app-config.js';
import { embeddedIpv4, nonPublicReason, SsrfPolicy, SsrfRefusedError } from './ssrf-policy.js';

describe('nonPublicReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local (cloud metadata)'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:7f00:1::', 'loopback'],
  ])('refuses %s as %s', (address, reason) => {
    expect(nonPublicReason(address)).toBe(reason);
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
  ])('accepts the public address %s', (address) => {
    expect(nonPublicReason(address)).toBeUndefined();
  });

  it('finds the IPv4 address inside mapped, NAT64 and 6to4 addresses', () => {
    expect(embeddedIpv4('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(embeddedIpv4('64:ff9b::c0a8:101')).toBe('192.168.1.1');
    expect(embeddedIpv4('2002:a9fe:a9fe::1')).toBe('169.254.169.254');
    expect(embeddedIpv4('2606:4700::1')).toBeUndefined();
  });
});

describe('SsrfPolicy', () => {
  const policy = new SsrfPolicy({
    cidrs: ['10.20.0.0/16', '127.0.0.1/32'],
    hosts: ['intranet.test'],
    hostPorts: ['127.0.0.2:8443', '[::1]:9000'],
  });

  it('allows public addresses whatever the allow-list says', () => {
    expect(() => policy.check('example.com', 443, '93.184.216.34')).not.toThrow();
  });

  it('allows listed networks, host names and host:port entries, and nothing beside them', () => {
    expect(() => policy.check('10.20.3.4', 80, '10.20.3.4')).not.toThrow();
    expect(() => policy.check('db.local', 5432, '10.20.0.9')).not.toThrow();
    expect(() => policy.check('127.0.0.1', 80, '::ffff:127.0.0.1')).not.toThrow();
    expect(() => policy.check('intranet.test', 80, '192.168.7.7')).not.toThrow();
    expect(() => policy.check('127.0.0.2', 8443, '127.0.0.2')).not.toThrow();
    expect(() => policy.check('localhost', 9000, '::1')).not.toThrow();

    expect(() => policy.check('10.21.0.1', 80, '10.21.0.1')).toThrow(SsrfRefusedError);
    expect(() => policy.check('127.0.0.2', 8444, '127.0.0.2')).toThrow(SsrfRefusedError);
    expect(() => policy.check('other.test', 80, '192.168.7.7')).toThrow(SsrfRefusedError);
    expect(() => policy.check('localhost', 9001, '::1')).toThrow(
      /Refused to connect to localhost \(::1\): a loopback address/,
    );
  });
});

describe('SSRF_ALLOWLIST', () => {
  it('is parsed into normalized CIDRs, host names and host:port entries', () => {
    const config = loadConfig({
      SSRF_ALLOWLIST:
        ' 10.0.0.0/8, 127.0.0.1 ,::1, Intranet.Example, 127.0.0.1:8080, [0:0:0:0:0:0:0:1]:9000,fd00::/8',
    });
    expect(config.tools.ssrfAllowlist).toEqual({
      cidrs: ['10.0.0.0/8', '127.0.0.1/32', '::1/128', 'fd00::/8'],
      hosts: ['intranet.example'],
      hostPorts: ['127.0.0.1:8080', '[::1]:9000'],
    });
    expect(loadConfig({}).tools.ssrfAllowlist).toEqual({ cidrs: [], hosts: [], hostPorts: [] });
  });

  it.each(['10.0.0.0/33', 'http://x.test', 'host:99999', 'a b'])('refuses the entry %s at boot', (entry) => {
    expect(() => loadConfig({ SSRF_ALLOWLIST: entry })).toThrow(ConfigError);
  });
});
