import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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
});
