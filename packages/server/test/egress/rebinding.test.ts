/**
 * The egress policy's resolving check and DNS rebinding: a name that resolves to an allowed address
 * when first asked and to a forbidden one the next time is refused the second time, by every kind
 * of caller (the resolving check, a socket's own lookup through guarded fetch, git). Names resolve
 * through the policy's resolver seam (a table here), never real DNS.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowedTargets } from '../../src/egress/address-policy.js';
import { EgressError } from '../../src/egress/egress-error.js';
import { EgressPolicy, type ResolveHost } from '../../src/egress/egress-policy.js';
import { guardedFetch } from '../../src/egress/guarded-fetch.js';
import { createVcsProvider } from '../../src/vcs/create-vcs-provider.js';
import { type GitHttpBackend, startGitHttpBackend } from '../standins/vcs/git-http-backend.js';
import { createGitRepos } from '../standins/vcs/git-repos.js';
import { expectKind } from '../vcs/contract.js';

const LOOPBACK = parseAllowedTargets('127.0.0.0/8,::1/128').ranges;

/** Answers each name from its list in turn, the last answer repeating: a rebinding DNS server. */
function rebinding(answers: Record<string, string[][]>): ResolveHost & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const list = answers[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return (list.length > 1 ? list.shift() : list[0]) as string[];
  };
  return Object.assign(resolve, { asked });
}

async function refusal(promise: Promise<unknown>): Promise<EgressError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EgressError);
  return error as EgressError;
}

describe('the resolving check', () => {
  it('checks every address a name resolves to: one forbidden address refuses the name', async () => {
    const policy = new EgressPolicy(
      LOOPBACK,
      rebinding({ 'mixed.test': [['93.184.215.14', '169.254.169.254']], 'good.test': [['93.184.215.14', '127.0.0.1']] }),
    );
    expect(await policy.resolve('good.test')).toEqual(['93.184.215.14', '127.0.0.1']);
    const error = await refusal(policy.resolve('mixed.test'));
    expect(error.kind).toBe('target_not_allowed');
    // What the name resolved to is not told back: it is the operator's DNS.
    expect(error.message).toBe(
      'mixed.test resolves to a link-local address, which this Siteplane does not connect to (SITEPLANE_ALLOWED_TARGETS)',
    );
  });

  it('checks literal addresses without resolving, and tells an unknown name as unreachable without the resolver’s words', async () => {
    const resolver = rebinding({});
    const policy = new EgressPolicy(LOOPBACK, resolver);
    expect(await policy.resolve('[::1]')).toEqual(['::1']);
    expect((await refusal(policy.resolve('169.254.169.254'))).kind).toBe('target_not_allowed');
    const unknown = await refusal(policy.resolve('nowhere.test'));
    expect(unknown).toMatchObject({ kind: 'unreachable', message: 'nowhere.test could not be resolved' });
    expect(resolver.asked).toEqual(['nowhere.test']);
  });

  it('a name that rebinds from an allowed to a forbidden address is refused at the next connect', async () => {
    const policy = new EgressPolicy(LOOPBACK, rebinding({ 'rebind.test': [['10.0.0.5'], ['169.254.169.254']] }));
    const withPrivate = new EgressPolicy(
      parseAllowedTargets('10.0.0.0/8').ranges,
      rebinding({ 'rebind.test': [['10.0.0.5'], ['169.254.169.254']] }),
    );
    expect((await refusal(policy.connectAddress('rebind.test'))).kind).toBe('target_not_allowed'); // 10/8 not listed here
    expect(await withPrivate.connectAddress('rebind.test')).toBe('10.0.0.5');
    expect((await refusal(withPrivate.connectAddress('rebind.test'))).kind).toBe('target_not_allowed');
  });
});

describe('HTTPS clients check at connect time (guarded fetch)', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      // No keep-alive: each request is a new connection, so each one resolves again.
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
      res.end('{"login":"octo"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('connects while the name resolves to an allowed address, refuses once it rebinds', async () => {
    const resolver = rebinding({ 'api.rebind.test': [['127.0.0.1'], ['169.254.169.254']] });
    const fetch = guardedFetch(new EgressPolicy(LOOPBACK, resolver));
    const first = await fetch(`http://api.rebind.test:${port}/user`);
    expect(await first.json()).toEqual({ login: 'octo' });
    const second = await fetch(`http://api.rebind.test:${port}/user`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(second).toMatchObject({ name: 'EgressError', kind: 'target_not_allowed' });
    expect(resolver.asked).toEqual(['api.rebind.test', 'api.rebind.test']);
  });

  it('refuses a literal forbidden address before connecting', async () => {
    const fetch = guardedFetch(new EgressPolicy([], rebinding({})));
    await expect(fetch(`http://127.0.0.1:${port}/user`)).rejects.toMatchObject({ kind: 'target_not_allowed' });
  });

  it('a hosted provider on such a baseUrl fails as target_not_allowed, not as an unreachable host', async () => {
    const policy = new EgressPolicy(LOOPBACK, rebinding({ 'gitea.rebind.test': [['127.0.0.1'], ['::ffff:169.254.169.254']] }));
    const provider = createVcsProvider(
      { provider: 'gitea', baseUrl: `http://gitea.rebind.test:${port}`, token: 'tok-12345', repositories: [] },
      { fetch: guardedFetch(policy), cacheTtlMs: 0 },
    );
    expect(await provider.whoami()).toEqual({ account: 'octo' });
    await expectKind(provider.whoami(), 'target_not_allowed', ['tok-12345']);
  });
});

describe('git checks right before it runs, and is pinned to the checked addresses', () => {
  let dir: string;
  let http: GitHttpBackend;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'siteplane-egress-git-'));
    await createGitRepos(join(dir, 'srv'));
    http = await startGitHttpBackend(join(dir, 'srv'));
  });
  afterAll(async () => {
    await http?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reads a remote whose name resolves (through the policy only) to loopback, then refuses it rebound', async () => {
    const port = new URL(http.origin).port;
    // git itself cannot resolve git.rebind.test: it reaches the backend only through the pinned address.
    const policy = new EgressPolicy(LOOPBACK, rebinding({ 'git.rebind.test': [['127.0.0.1'], ['169.254.169.254']] }));
    const provider = createVcsProvider(
      { provider: 'git', baseUrl: null, token: null, repositories: [`http://git.rebind.test:${port}/acme/api.git`] },
      { checkHost: (host) => policy.resolve(host), cacheTtlMs: 0 },
    );
    expect(await provider.whoami()).toEqual({ account: null });
    const error = await expectKind(provider.whoami(), 'target_not_allowed', []);
    expect(error.message).toContain('git.rebind.test resolves to a link-local address');
  });

  it('refuses a literal forbidden address without running git', async () => {
    const requests = http.requests;
    const policy = new EgressPolicy([], rebinding({}));
    const provider = createVcsProvider(
      { provider: 'git', baseUrl: null, token: null, repositories: [`${http.origin}/acme/api.git`] },
      { checkHost: (host) => policy.resolve(host) },
    );
    await expectKind(provider.listRepositories(), 'target_not_allowed', []);
    expect(http.requests).toBe(requests);
  });
});
