// SITEPLANE_PUBLIC_URL (ARCHITECTURE §2 "Configuration"): validated at start with every other problem.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.js';
import { configProblems } from '../support/config-problems.js';

const REFUSED =
  'SITEPLANE_PUBLIC_URL must be an http(s) URL without credentials, query or fragment, e.g. https://siteplane.example.com';

describe('SITEPLANE_PUBLIC_URL', () => {
  it('is unset by default: hook URLs follow the request', () => {
    expect(loadConfig({}).publicUrl).toBeNull();
  });

  it('keeps the origin and a path prefix, without the trailing slash', () => {
    expect(loadConfig({ SITEPLANE_PUBLIC_URL: 'https://sp.example.com/' }).publicUrl).toBe('https://sp.example.com');
    expect(loadConfig({ SITEPLANE_PUBLIC_URL: ' https://Example.COM:8443/siteplane// ' }).publicUrl).toBe(
      'https://example.com:8443/siteplane',
    );
    expect(loadConfig({ SITEPLANE_PUBLIC_URL: 'http://127.0.0.1:8080' }).publicUrl).toBe('http://127.0.0.1:8080');
  });

  it('refuses what would put something else into every hook URL, listed with the other problems', () => {
    for (const value of [
      'sp.example.com',
      'ftp://sp.example.com',
      'https://user:pass@sp.example.com',
      'https://sp.example.com/?a=1',
      'https://sp.example.com/#x',
    ])
      expect(configProblems({ SITEPLANE_PUBLIC_URL: value })).toEqual([REFUSED]);
    expect(configProblems({ SITEPLANE_PUBLIC_URL: 'nope', PORT: 'x' }).sort()).toEqual(
      [REFUSED, 'PORT must be an integer from 0 to 65535 (got "x")'].sort(),
    );
  });
});
