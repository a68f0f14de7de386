/** The egress policy's address check (SITEPLANE_ALLOWED_TARGETS): every special-purpose range, the allow list, the config. */
import { describe, expect, it } from 'vitest';
import { type ConfigError, loadConfig } from '../../src/app/config.js';
import { checkAddress, DEFAULT_ALLOWED_TARGETS, parseAllowedTargets } from '../../src/egress/address-policy.js';
import { parseCidr, parseIp } from '../../src/egress/ip-ranges.js';

const DEFAULTS = parseAllowedTargets(DEFAULT_ALLOWED_TARGETS).ranges;
const NONE = parseAllowedTargets('none').ranges;
const verdict = (address: string, allowed = DEFAULTS) => checkAddress(address, allowed);

describe('checkAddress with the default SITEPLANE_ALLOWED_TARGETS', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '100.63.255.255',
    '100.128.0.0',
    '172.32.0.1',
    '192.0.3.1',
    '2001:4860:4860::8888',
    '2a00:1450:4001:82b::200e',
    '2606:4700::1111',
  ])('public %s: allowed', (address) => {
    expect(verdict(address)).toEqual({ allowed: true });
    expect(verdict(address, NONE)).toEqual({ allowed: true });
  });

  it.each([
    ['10.0.0.1', 'private'],
    ['10.231.7.2', 'private'], // the system tests' pristine hosts
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.10', 'private'],
    ['fd12:3456::1', 'private'],
    ['fc00::1', 'private'],
    ['::ffff:10.1.2.3', 'private'],
  ])('private %s: allowed by default, refused when not listed', (address, kind) => {
    expect(verdict(address)).toEqual({ allowed: true });
    expect(verdict(address, NONE)).toEqual({ allowed: false, kind });
  });

  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['169.254.169.254', 'link-local'], // cloud metadata
    ['169.254.0.1', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::127.0.0.1', 'reserved'], // IPv4-compatible, deprecated
    ['64:ff9b::a9fe:a9fe', 'reserved'], // NAT64 of 169.254.169.254
    ['64:ff9b:1::1', 'reserved'],
    ['100::1', 'reserved'],
    ['2001::1', 'reserved'], // Teredo
    ['2002:a9fe:a9fe::1', 'reserved'], // 6to4 of 169.254.169.254
    ['fec0::1', 'reserved'],
    ['4000::1', 'reserved'], // outside 2000::/3
    ['not-an-ip', 'invalid'],
  ])('%s: refused as %s unless listed', (address, kind) => {
    expect(verdict(address)).toEqual({ allowed: false, kind });
  });

  it('allows a special range the operator lists, and only that range', () => {
    const loopback = parseAllowedTargets('127.0.0.0/8,::1/128').ranges;
    expect(verdict('127.0.0.1', loopback)).toEqual({ allowed: true });
    expect(verdict('::ffff:127.0.0.2', loopback)).toEqual({ allowed: true });
    expect(verdict('::1', loopback)).toEqual({ allowed: true });
    expect(verdict('169.254.169.254', loopback)).toEqual({ allowed: false, kind: 'link-local' });
    expect(verdict('10.0.0.1', loopback)).toEqual({ allowed: false, kind: 'private' });
    const single = parseAllowedTargets('169.254.10.1').ranges;
    expect(verdict('169.254.10.1', single)).toEqual({ allowed: true });
    expect(verdict('169.254.169.254', single)).toEqual({ allowed: false, kind: 'link-local' });
  });
});

describe('CIDRs and addresses', () => {
  it('parses IPv4, IPv6, embedded IPv4 and canonical forms', () => {
    expect(parseCidr('10.0.0.0/8')).toMatchObject({ family: 4, prefix: 8, text: '10.0.0.0/8' });
    expect(parseCidr('FC00::/7')).toMatchObject({ family: 6, prefix: 7, text: 'fc00::/7' });
    expect(parseCidr('::1')).toMatchObject({ family: 6, prefix: 128, text: '::1/128' });
    expect(parseCidr('192.0.2.7')).toMatchObject({ family: 4, prefix: 32 });
    expect(parseIp('::ffff:1.2.3.4')).toEqual(parseIp('1.2.3.4'));
    expect(parseIp('1:2:3:4:5:6:7.8.9.10')?.value).toBe(parseIp('1:2:3:4:5:6:708:90a')?.value);
    expect(parseIp('[2001:db8::1]')).toEqual(parseIp('2001:db8::1'));
  });

  it('refuses what is not a range, with the reason', () => {
    expect(parseCidr('10.1.2.3/8')).toBe('"10.1.2.3/8" has host bits set (the range is 10.0.0.0/8)');
    expect(parseCidr('10.0.0.0/33')).toBe('"10.0.0.0/33" has a prefix length beyond 32');
    expect(parseCidr('10.0.0.0/x')).toBe('"10.0.0.0/x" has an invalid prefix length');
    expect(parseCidr('example.com/8')).toBe('"example.com/8" is not an address or CIDR range');
  });
});

describe('configuration', () => {
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };

  it('defaults: local servers off, RFC 1918 and ULA ranges allowed, parsed once', () => {
    const config = loadConfig({});
    expect(config.localServer).toBe(false);
    expect(config.allowedTargets.map((range) => range.text)).toEqual([
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      'fc00::/7',
    ]);
  });

  it('takes the operator settings, `none` for public addresses only, and lists every problem', () => {
    const config = loadConfig({ SITEPLANE_LOCAL_SERVER: 'on', SITEPLANE_ALLOWED_TARGETS: ' 127.0.0.0/8 , ::1/128 ' });
    expect(config.localServer).toBe(true);
    expect(config.allowedTargets.map((range) => range.text)).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig({ SITEPLANE_ALLOWED_TARGETS: 'none' }).allowedTargets).toEqual([]);
    expect(problems({ SITEPLANE_LOCAL_SERVER: 'yes', SITEPLANE_ALLOWED_TARGETS: '10.1.0.0/8,localhost' })).toEqual([
      'SITEPLANE_LOCAL_SERVER must be on or off (got "yes")',
      'SITEPLANE_ALLOWED_TARGETS entry "10.1.0.0/8" has host bits set (the range is 10.0.0.0/8)',
      'SITEPLANE_ALLOWED_TARGETS entry "localhost" is not an address or CIDR range',
    ]);
  });

  it('SITEPLANE_TRUSTED_PROXIES: none by default; addresses and ranges, each bad entry named', () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ SITEPLANE_TRUSTED_PROXIES: ' 127.0.0.1, ::1 ,10.8.0.0/16 ' }).trustedProxies.map((r) => r.text)).toEqual([
      '127.0.0.1/32',
      '::1/128',
      '10.8.0.0/16',
    ]);
    expect(problems({ SITEPLANE_TRUSTED_PROXIES: 'proxy.internal,10.8.0.1/16' })).toEqual([
      'SITEPLANE_TRUSTED_PROXIES entry "proxy.internal" is not an address or CIDR range',
      'SITEPLANE_TRUSTED_PROXIES entry "10.8.0.1/16" has host bits set (the range is 10.8.0.0/16)',
    ]);
  });
});
