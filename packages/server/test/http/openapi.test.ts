import { readFileSync } from 'node:fs';
import { DATABASE_OPTION_NAMES, SITE_TYPE_IDS, SITE_TYPES } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import { assertOperationIds } from '../../src/http/openapi.js';
import type { RouteDef } from '../../src/http/route.js';
import { buildOpenApiDocument } from '../support/openapi-document.js';

describe('OpenAPI document', () => {
  it('the committed openapi.json matches what the service serves (run `npm run openapi` after a route change)', async () => {
    const committed = JSON.parse(readFileSync(new URL('../../../../openapi.json', import.meta.url), 'utf8'));
    expect(committed).toEqual(await buildOpenApiDocument());
  });

  it('documents every endpoint of spec §4 with bearer security', async () => {
    const doc = (await buildOpenApiDocument()) as { paths: Record<string, Record<string, unknown>>; security: unknown };
    const expected: [string, string][] = [
      ['get', '/api/v1/sites'],
      ['get', '/api/v1/sites/{site}'],
      ['post', '/api/v1/sites'],
      ['delete', '/api/v1/sites/{site}'],
      ['get', '/api/v1/vc-profiles'],
      ['get', '/api/v1/vc-profiles/{profile}'],
      ['get', '/api/v1/vc-profiles/{profile}/repos'],
      ['get', '/api/v1/vc-profiles/{profile}/repos/{repo_name}'],
    ];
    for (const [method, path] of expected) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('names every operation explicitly, once, with the stable ids the SDK uses', async () => {
    const doc = (await buildOpenApiDocument()) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const ids = Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z0-9]*$/);
    expect(new Set(ids).size).toBe(ids.length);
    // A few the SDK and its users depend on: renaming one is a breaking change.
    expect(doc.paths['/api/v1/sites']?.get?.operationId).toBe('listSites');
    expect(doc.paths['/api/v1/sites']?.post?.operationId).toBe('createSite');
    expect(doc.paths['/api/v1/sites/{site}']?.delete?.operationId).toBe('deleteSite');
    expect(doc.paths['/api/v1/operations/{operation}']?.get?.operationId).toBe('getOperation');
  });

  it('the create body is one schema per site type: a oneOf discriminated by type, titled with the display name', async () => {
    type Obj = {
      title?: string;
      required?: string[];
      properties: Record<string, { const?: string; properties?: object; required?: string[] }>;
    };
    const doc = (await buildOpenApiDocument()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.paths['/api/v1/sites']?.post?.requestBody?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/CreateSiteRequest',
    });
    const body = doc.components.schemas.CreateSiteRequest as {
      oneOf: { $ref: string }[];
      discriminator: { propertyName: string; mapping: Record<string, string> };
    };
    expect(body.discriminator.propertyName).toBe('type');
    expect(Object.keys(body.discriminator.mapping).sort()).toEqual([...SITE_TYPE_IDS].sort());
    expect(body.oneOf.map((b) => b.$ref).sort()).toEqual(Object.values(body.discriminator.mapping).sort());
    for (const id of SITE_TYPE_IDS) {
      const spec = SITE_TYPES[id];
      const branch = doc.components.schemas[(body.discriminator.mapping[id] ?? '').split('/').pop() ?? ''] as Obj;
      expect(branch.title).toBe(spec.displayName);
      expect(branch.properties.type?.const).toBe(id);
      const options = branch.properties.options as { properties: object; required?: string[] };
      // Each type's own options: its table entry's, the database ones where it has a database.
      const expected = [...spec.options, ...(spec.database === 'none' ? [] : DATABASE_OPTION_NAMES)];
      if (spec.typeVersions.length) expected.push('site_type_version');
      expect(Object.keys(options.properties).sort(), id).toEqual(expected.sort());
      expect(options.required ?? [], id).toEqual([...spec.requiredOptions]);
    }
  });

  it('refuses routes without a usable or with a shared operationId', () => {
    const route = { method: 'GET', url: '/x', operationId: 'getX' } as RouteDef;
    expect(() => assertOperationIds([route, { ...route, url: '/y' }])).toThrow(/used twice/);
    expect(() => assertOperationIds([{ ...route, operationId: '' }])).toThrow(/lowerCamelCase/);
    expect(() => assertOperationIds([route, { ...route, operationId: 'getY' }])).not.toThrow();
  });

  it('refers to shared shapes by name: every $ref resolves and Site is one component', async () => {
    const doc = (await buildOpenApiDocument()) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/[A-Za-z]+"/g) ?? [];
    for (const ref of refs) expect(doc.components.schemas, ref).toHaveProperty(ref.slice(22, -1));
    expect(JSON.stringify(doc.paths['/api/v1/sites/{site}']?.get)).toContain('"#/components/schemas/Site"');
    expect(JSON.stringify(doc.paths['/api/v1/sites']?.get)).toContain('"#/components/schemas/ListMeta"');
  });
});
