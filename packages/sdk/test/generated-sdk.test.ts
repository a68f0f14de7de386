import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSdk, type OpenApiDocument } from '../codegen/generate-sdk.js';
import { type ApiCall, OPERATION_IDS, SiteplaneApi, SiteplaneClient } from '../src/index.js';

const doc = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8')) as OpenApiDocument;
const operationIds = Object.values(doc.paths).flatMap((byMethod) => Object.values(byMethod).map((op) => op.operationId));

describe('generated SDK', () => {
  it('the committed packages/sdk/src/generated matches openapi.json (run `npm run sdk:generate` after `npm run openapi`)', async () => {
    const files = await generateSdk(doc);
    expect(Object.keys(files).sort()).toEqual(['api.ts', 'schema.ts']);
    for (const [name, text] of Object.entries(files)) {
      const committed = readFileSync(new URL(`../src/generated/${name}`, import.meta.url), 'utf8');
      expect(committed, `generated/${name} is stale`).toBe(text);
    }
  });

  it('has one method for every operation of the document, and no other', () => {
    expect([...OPERATION_IDS].sort()).toEqual([...operationIds].sort());
    const methods = Object.getOwnPropertyNames(SiteplaneApi.prototype).filter((m) => m !== 'constructor');
    expect(methods.sort()).toEqual([...operationIds].sort());
  });

  it('a method sends its operation: path parameters encoded, query, body and idempotency key', async () => {
    const calls: ApiCall[] = [];
    const api = new SiteplaneApi(async (call) => {
      calls.push(call);
      return { data: [], meta: { next_cursor: null, limit: 100 } };
    });
    await api.listSites({ server: 's-1', limit: 5 });
    await api.getRepository('p-1', 'acme/app');
    await api.deleteSite('a b', { deleteDatabase: true }, { idempotencyKey: 'k1' });
    expect(calls.map(({ method, path, query, body, answer }) => ({ method, path, query, body, answer }))).toEqual([
      { method: 'GET', path: '/api/v1/sites', query: { server: 's-1', limit: 5 }, body: undefined, answer: 'json' },
      { method: 'GET', path: '/api/v1/vc-profiles/p-1/repos/acme%2Fapp', query: undefined, body: undefined, answer: 'json' },
      { method: 'DELETE', path: '/api/v1/sites/a%20b', query: undefined, body: { deleteDatabase: true }, answer: 'json' },
    ]);
    expect(calls[2]?.options?.idempotencyKey).toBe('k1');
  });

  it('the client sends query, headers and body over fetch, follows every page and throws the problem', async () => {
    const seen: { url: string; method: string; headers: Record<string, string>; body: unknown }[] = [];
    const fakeFetch = (async (url: URL, init: RequestInit) => {
      seen.push({
        url: String(url),
        method: String(init.method),
        headers: init.headers as Record<string, string>,
        body: init.body ? JSON.parse(String(init.body)) : undefined,
      });
      if (String(url).includes('/servers')) {
        const problem = {
          status: 404,
          code: 'not_found',
          detail: 'No such server.',
          title: 'Not Found',
          type: 'x',
          request_id: 'r',
        };
        return new Response(JSON.stringify(problem), { status: 404 });
      }
      const second = String(url).includes('cursor=c2');
      const page = { data: [{ uuid: second ? 'b' : 'a' }], meta: { next_cursor: second ? null : 'c2', limit: 1 } };
      return new Response(JSON.stringify(page), { status: 200 });
    }) as unknown as typeof fetch;
    const client = new SiteplaneClient({ baseUrl: 'http://api.test', token: 'sp_t', fetch: fakeFetch });
    expect((await client.listSites('srv')).map((s) => s.uuid)).toEqual(['a', 'b']);
    expect(seen[0]?.url).toBe('http://api.test/api/v1/sites?server=srv');
    expect(seen[1]?.url).toBe('http://api.test/api/v1/sites?server=srv&cursor=c2');
    expect(seen[0]?.headers.authorization).toBe('Bearer sp_t');
    await expect(client.api.getServer('nope')).rejects.toMatchObject({ status: 404, problem: { code: 'not_found' } });
  });
});
