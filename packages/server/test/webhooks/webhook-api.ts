/** Requests the webhook HTTP tests share: a site to hook, its webhook configured, hooks sent raw. */
import type { LightMyRequestResponse } from 'fastify';
import { seedServer, type TestService } from '../support/test-service.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies, checked field by field
export type Json = Record<string, any>;

export const auth = (token: string) => ({ authorization: `Bearer ${token}` });

const servers = new WeakMap<TestService, Map<string, Promise<{ server: string; serverUser: string }>>>();

/** A static site on a dry-run server of the token's team (one server per service and token). */
export async function createSite(s: TestService, domain: string, token = s.token): Promise<string> {
  const byToken = servers.get(s) ?? new Map();
  servers.set(s, byToken);
  const seeded = byToken.get(token) ?? seedServer(s, {}, token);
  byToken.set(token, seeded);
  const ids = await seeded;
  const res = await s.app.inject({
    method: 'POST',
    url: '/api/v1/sites',
    headers: auth(token),
    payload: { ...ids, type: 'static-html', domain, ssl: false, options: {} },
  });
  if (res.statusCode !== 202) throw new Error(`site: ${res.statusCode} ${res.body}`);
  return res.json().uuid as string;
}

export async function configure(
  s: TestService,
  site: string,
  payload: Json = {},
  token = s.token,
): Promise<LightMyRequestResponse> {
  return s.app.inject({ method: 'POST', url: `/api/v1/sites/${site}/webhook`, headers: auth(token), payload });
}

/** A hook as the provider sends it: these exact bytes, these headers, no bearer token. */
export function sendHook(s: TestService, url: string, body: string | Buffer, headers: Record<string, string>) {
  return s.app.inject({ method: 'POST', url, headers, payload: body });
}

export async function deliveries(s: TestService, site: string): Promise<Json[]> {
  const res = await s.app.inject({
    method: 'GET',
    url: `/api/v1/sites/${site}/webhook/deliveries?limit=500`,
    headers: auth(s.token),
  });
  if (res.statusCode !== 200) throw new Error(`deliveries: ${res.statusCode} ${res.body}`);
  return res.json().data as Json[];
}

export const lastDelivery = async (s: TestService, site: string): Promise<Json> => (await deliveries(s, site)).at(-1) as Json;

/** A problem's body without its request id, to compare two answers. */
export const withoutRequestId = (res: LightMyRequestResponse): Json => {
  const { request_id: _id, ...rest } = res.json() as Json;
  return { status: res.statusCode, ...rest };
};
