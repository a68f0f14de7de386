import { Type as T } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { type ResponseMismatch, responseCheck } from '../../src/http/response-check.js';
import type { RouteDef } from '../../src/http/route.js';

const route = {
  method: 'GET',
  url: '/x',
  operationId: 'getX',
  responses: { 200: { description: 'x', schema: T.Object({ a: T.String() }) }, 204: { description: 'none' } },
} as unknown as RouteDef;
const req = { method: 'GET', url: '/x' } as FastifyRequest;
const reply = (statusCode: number) => ({ statusCode }) as FastifyReply;

describe('response check (every HTTP test checks each answer against its documented schema)', () => {
  it('reports an answer that breaks its status’s schema, with the field', async () => {
    const seen: ResponseMismatch[] = [];
    const hook = responseCheck(route, (m) => seen.push(m));
    expect(await hook(req, reply(200), '{"a":1}')).toBe('{"a":1}');
    expect(seen).toEqual([
      { operationId: 'getX', method: 'GET', url: '/x', status: 200, errors: [expect.objectContaining({ field: 'a' })] },
    ]);
  });

  it('passes a matching answer, an undocumented status and a stream without a report', async () => {
    const seen: ResponseMismatch[] = [];
    const hook = responseCheck(route, (m) => seen.push(m));
    await hook(req, reply(200), '{"a":"ok"}');
    await hook(req, reply(204), '');
    await hook(req, reply(500), '{"whatever":true}');
    await hook(req, reply(200), { pipe() {} });
    expect(seen).toEqual([]);
  });
});
