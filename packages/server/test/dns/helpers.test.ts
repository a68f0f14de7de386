/** The pure pieces under the adapters: names, Route 53 value syntax, Retry-After, credential checks. */
import { describe, expect, it } from 'vitest';
import { createDnsProvider } from '../../src/dns/create-dns-provider.js';
import { retryAfterSeconds, scrub } from '../../src/dns/http.js';
import { candidateZones, longestZone, relativeName, ttlAtLeast } from '../../src/dns/names.js';
import type { DnsCredentials } from '../../src/dns/provider.js';
import { quoteTxt, unescapeName, unquoteTxt } from '../../src/dns/route53-values.js';
import { expectDnsError } from './provider-cases.js';

describe('zone names', () => {
  it('lists candidate zones longest first, without the top-level label', () => {
    expect(candidateZones('_acme-challenge.www.Example.COM.')).toEqual([
      '_acme-challenge.www.example.com',
      'www.example.com',
      'example.com',
    ]);
    expect(candidateZones('com')).toEqual([]);
  });

  it('picks the longest hosted suffix, and only whole labels', () => {
    expect(longestZone('a.b.example.com', ['example.com', 'b.example.com.', 'other.com'])).toBe('b.example.com');
    expect(longestZone('a.notexample.com', ['example.com'])).toBeUndefined();
  });

  it('makes names relative to their zone', () => {
    expect(relativeName('_acme-challenge.www.example.com', 'example.com')).toBe('_acme-challenge.www');
    expect(relativeName('Example.com.', 'example.com')).toBe('');
    expect(() => relativeName('example.org', 'example.com')).toThrow();
  });

  it('raises a TTL to the provider minimum', () => {
    expect(ttlAtLeast(undefined, 600)).toBe(600);
    expect(ttlAtLeast(undefined, 30)).toBe(60);
    expect(ttlAtLeast(3600, 60)).toBe(3600);
  });
});

describe('Route 53 values', () => {
  it('quotes TXT values, escaping quotes and splitting at 255 characters', () => {
    expect(quoteTxt('abc')).toBe('"abc"');
    expect(quoteTxt('say "hi" \\o/')).toBe('"say \\"hi\\" \\\\o/"');
    const long = 'a'.repeat(300);
    expect(quoteTxt(long)).toBe(`"${'a'.repeat(255)}" "${'a'.repeat(45)}"`);
    for (const value of ['abc', 'say "hi" \\o/', long, '']) expect(unquoteTxt(quoteTxt(value))).toBe(value);
  });

  it('reads unquoted values and octal escapes as Route 53 writes them', () => {
    expect(unquoteTxt('plain')).toBe('plain');
    expect(unescapeName('\\052.example.com.')).toBe('*.example.com.');
  });
});

describe('HTTP helpers', () => {
  it('reads Retry-After as seconds or as a date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds(new Headers({ 'retry-after': '42' }), now)).toBe(42);
    expect(retryAfterSeconds(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toBe(30);
    expect(retryAfterSeconds(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterSeconds(new Headers(), now)).toBeUndefined();
  });

  it('removes every credential value from a message', () => {
    expect(scrub('key sk1_abc echoed twice: sk1_abc', ['sk1_abc', ''])).toBe('key [redacted] echoed twice: [redacted]');
  });
});

describe('createDnsProvider', () => {
  it('refuses credentials that lack a field, naming the field and not the values', async () => {
    const error = await expectDnsError(
      Promise.resolve().then(() => createDnsProvider('porkbun', { apiKey: 'pk1_visible-key', secretApiKey: '' })),
      'auth_failed',
      ['pk1_visible-key'],
    );
    expect(error.message).toContain('secretApiKey');
  });

  it('refuses an unknown provider', async () => {
    await expectDnsError(
      Promise.resolve().then(() => createDnsProvider('bind' as 'cloudflare', {} as DnsCredentials['cloudflare'])),
      'provider_error',
      [],
    );
  });
});
