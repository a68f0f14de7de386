import { describe, expect, it } from 'vitest';
import {
  authorizationName,
  dns01RecordName,
  normaliseCertificateNames,
  planChallenges,
  siteCertificateNames,
} from '../../src/tls/certificate-names.js';

describe('siteCertificateNames', () => {
  it('covers the domain, and www when asked', () => {
    expect(siteCertificateNames('Example.com.')).toEqual(['example.com']);
    expect(siteCertificateNames('example.com', { includeWww: true })).toEqual(['example.com', 'www.example.com']);
  });

  it('puts the wildcard first for a wildcard certificate', () => {
    expect(siteCertificateNames('wild.test', { wildcard: true })).toEqual(['*.wild.test', 'wild.test']);
    expect(siteCertificateNames('wild.test', { wildcard: true, includeWww: true })).toEqual([
      '*.wild.test',
      'wild.test',
      'www.wild.test',
    ]);
  });

  it('does not add www.www.', () => {
    expect(siteCertificateNames('www.example.com', { includeWww: true })).toEqual(['www.example.com']);
  });
});

describe('normaliseCertificateNames', () => {
  it('lower-cases and drops duplicates, keeping order', () => {
    expect(normaliseCertificateNames(['B.example.com', '*.Example.com', 'b.example.com.'])).toEqual([
      'b.example.com',
      '*.example.com',
    ]);
  });

  it.each([
    ['a.*.example.com', 'wildcard'],
    ['*example.com', 'label'],
    ['localhost', 'two labels'],
    ['exa mple.com', 'ASCII'],
    ['10.0.0.1', 'IP'],
  ])('refuses %s', (name, why) => {
    expect(() => normaliseCertificateNames([name])).toThrow(new RegExp(why));
  });

  it('needs at least one and at most 100 names', () => {
    expect(() => normaliseCertificateNames([])).toThrow(/at least one/);
    const many = Array.from({ length: 101 }, (_, i) => `n${i}.example.com`);
    expect(() => normaliseCertificateNames(many)).toThrow(/100/);
  });
});

describe('planChallenges', () => {
  it('proves wildcards with DNS-01 and the rest with the chosen challenge', () => {
    expect(planChallenges(['*.wild.test', 'wild.test', 'www.wild.test'], 'http-01')).toEqual([
      { name: '*.wild.test', challenge: 'dns-01' },
      { name: 'wild.test', challenge: 'http-01' },
      { name: 'www.wild.test', challenge: 'http-01' },
    ]);
    expect(planChallenges(['wild.test'], 'dns-01')).toEqual([{ name: 'wild.test', challenge: 'dns-01' }]);
  });
});

describe('ACME names', () => {
  it('maps a wildcard authorization back to its certificate name', () => {
    expect(authorizationName({ identifier: { value: 'Wild.test' }, wildcard: true })).toBe('*.wild.test');
    expect(authorizationName({ identifier: { value: 'wild.test' } })).toBe('wild.test');
  });

  it('puts the TXT record of a wildcard at the base name', () => {
    expect(dns01RecordName('*.wild.test')).toBe('_acme-challenge.wild.test');
    expect(dns01RecordName('www.wild.test')).toBe('_acme-challenge.www.wild.test');
  });
});
