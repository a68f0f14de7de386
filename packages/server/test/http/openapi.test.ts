import { readFileSync } from 'node:fs';
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
