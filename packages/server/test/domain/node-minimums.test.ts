import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/domain/field-errors.js';
import { EMPTY_FACTS, type ServerFacts } from '../../src/domain/servers/facts.js';
import type { CreateSiteContext } from '../../src/domain/sites/create-site-context.js';
import { validateCreateSite } from '../../src/domain/sites/validate-create-site.js';

const SERVER = '11111111-1111-4111-8111-111111111111';
const USER = '22222222-2222-4222-8222-222222222222';

function ctx(facts: Partial<ServerFacts> = {}): CreateSiteContext {
  return {
    server: { uuid: SERVER, facts: { ...EMPTY_FACTS, ...facts } },
    serverUserExists: true,
    dnsProfile: null,
    taken: { domains: new Set(), databases: new Set(), databaseUsers: new Set(), ports: new Set(), singletonTypes: new Set() },
  };
}

const site = (type: string, options: Record<string, unknown> = {}) => ({
  server: SERVER,
  serverUser: USER,
  type,
  domain: 'example.com',
  ssl: false,
  options,
});

function nodePlan(type: string, options: Record<string, unknown>, facts: Partial<ServerFacts> = {}) {
  return validateCreateSite(site(type, options), ctx(facts)).runtime.node;
}

function nodeErrors(type: string, options: Record<string, unknown>, facts: Partial<ServerFacts> = {}) {
  try {
    validateCreateSite(site(type, options), ctx(facts));
  } catch (error) {
    if (error instanceof ValidationError) return error.errors.map((e) => ({ field: e.field, code: e.code, message: e.message }));
    throw error;
  }
  return [];
}

// Each framework's minimum is the engines.node of the release its recipe installs (site-types.ts).
const MINIMUMS: [type: string, version: number | undefined, major: number][] = [
  ['strapi', 5, 20],
  ['strapi', 4, 18],
  ['directus', 11, 22],
  ['directus', 10, 18],
  ['nuxt-ssr', 4, 22],
  ['nuxt-ssr', 3, 20],
  ['nuxt-static', 4, 22],
  ['next-ssr', undefined, 18],
  ['adonis', 6, 20],
  ['adonis', 7, 24],
];

const withVersion = (version: number | undefined, options: Record<string, unknown> = {}) =>
  version === undefined ? options : { ...options, site_type_version: version };

describe('spec §2.2 nodejsVersion, §2.5 types: a framework Node minimum checked at create time', () => {
  it.each(MINIMUMS)(
    '%s %s on a server without Node: a nodejsVersion below %i.x is a 422 naming options.nodejsVersion',
    (type, version, major) => {
      expect(nodeErrors(type, withVersion(version, { nodejsVersion: `${major - 2}.x` }))).toEqual([
        {
          field: 'options.nodejsVersion',
          code: 'node_too_old',
          message: expect.stringContaining(`needs Node ${major}.x or later`),
        },
      ]);
      expect(nodePlan(type, withVersion(version, { nodejsVersion: `${major}.x` }))).toEqual({
        version: `${major}.x`,
        action: 'install',
      });
    },
  );

  it('without nodejsVersion the default (22.x) is installed, or the minimum when the default is older', () => {
    expect(nodePlan('strapi', { site_type_version: 5 })).toEqual({ version: '22.x', action: 'install' });
    expect(nodePlan('directus', {})).toEqual({ version: '22.x', action: 'install' });
    expect(nodePlan('adonis', { site_type_version: 7 })).toEqual({ version: '24.x', action: 'install' });
  });

  it.each(MINIMUMS.filter(([type]) => type !== 'adonis'))(
    '%s %s: an installed Node below %i.x is refused, not upgraded (one Node per server, spec §2.2, §8)',
    (type, version, major) => {
      const errors = nodeErrors(type, withVersion(version), { node: `${major - 2}.19.0` });
      expect(errors).toEqual([{ field: 'options.nodejsVersion', code: 'node_too_old', message: expect.any(String) }]);
      expect(errors[0]?.message).toContain(`The server's Node.js ${major - 2}.19.0 is too old for this framework`);
      expect(nodePlan(type, withVersion(version), { node: `${major}.1.0` })).toEqual({ version: `${major}.x`, action: 'reuse' });
    },
  );

  it('Adonis 6 and 7 may upgrade an installed Node that is too old (spec §2.2)', () => {
    expect(nodePlan('adonis', { site_type_version: 6 }, { node: '18.19.0' })).toEqual({ version: '20.x', action: 'upgrade' });
    expect(nodePlan('adonis', { site_type_version: 7 }, { node: '22.11.0' })).toEqual({ version: '24.x', action: 'upgrade' });
  });

  it('types without a minimum reuse any installed Node and install any allowed version', () => {
    expect(nodePlan('nodejs-ssr', {}, { node: '12.22.0' })).toEqual({ version: '12.x', action: 'reuse' });
    expect(nodePlan('soketi', { nodejsVersion: '14.x' })).toEqual({ version: '14.x', action: 'install' });
    expect(nodePlan('nuxt-ssr', { site_type_version: 2 }, { node: '16.0.0' })).toEqual({ version: '16.x', action: 'reuse' });
  });
});
