/**
 * The contract every VcsProvider keeps (spec §4.2, issue 5), run against each provider's stand-in
 * (hosted) or real git servers (plain git): complete answers across pages, the default branch,
 * honest failures of each kind, and a cache that spares the provider a second identical request.
 */
import { expect, it } from 'vitest';
import { type Branch, VcsError, type VcsErrorKind, type VcsProvider } from '../../src/vcs/provider.js';

export interface ContractHarness {
  /** The profile's provider, with the test's clock (epoch milliseconds). */
  provider(now: () => number): VcsProvider;
  /** The same profile pointed at a port nothing listens on. */
  unreachableProvider(): VcsProvider;
  /** The same profile with a token the provider rejects (hosted only). */
  badTokenProvider?: () => VcsProvider;
  /** Token and other values that must never appear in an error message. */
  secrets: string[];
  account: string | null;
  expected: {
    names: string[];
    big: { name: string; defaultBranch: string; branches: Branch[] };
    /** A well-formed name the provider does not have. */
    missingName: string;
  };
  /** Whether summaries carry visibility and a web address (hosted) or null (plain git). */
  knowsVisibility: boolean;
  /** Requests the provider's server has answered so far. */
  requestCount(): number;
  /** Hosted only: let `requests` more through, then refuse with the provider's rate-limit answer. */
  rateLimit?: { limit(requests: number, resetInSeconds: number): void; clear(): void };
  /** Whether the rate-limit answer says when to retry (Bitbucket's does not). */
  rateLimitSaysWhen?: boolean;
  /** Providers that send ETags: what the server saw on revalidation. */
  revalidation?: () => { sentIfNoneMatch: number; served304: number; total: number };
}

/**
 * Registers the contract's tests. `hosted` adds the cases plain git has no counterpart for: a
 * rejected token and the provider's rate limit.
 */
export function vcsContract(harness: () => ContractHarness, scope: { hosted: boolean }): void {
  const clock = () => {
    let t = Date.now();
    const now = () => t;
    return { now, advance: (ms: number) => (t += ms) };
  };

  it('tells the account the credentials belong to', async () => {
    const h = harness();
    expect(await h.provider(Date.now).whoami()).toEqual({ account: h.account });
  });

  it('lists every repository, all pages, each once', async () => {
    const h = harness();
    const before = h.requestCount();
    const repos = await h.provider(Date.now).listRepositories();
    expect(repos.map((r) => r.name).sort()).toEqual([...h.expected.names].sort());
    expect(h.requestCount() - before).toBeGreaterThan(1);
    const big = repos.find((r) => r.name === h.expected.big.name);
    expect(big?.default_branch).toBe(h.expected.big.defaultBranch);
    for (const repo of repos) {
      expect(repo.name).toMatch(/^[^/]+(\/[^/]+)+$/);
      if (h.knowsVisibility) {
        expect(typeof repo.private).toBe('boolean');
        expect(repo.web_url).toMatch(/^https?:\/\//);
      } else {
        expect(repo).toMatchObject({ private: null, web_url: null });
      }
    }
  });

  it('returns one repository with its default branch and all of its 250 branches', async () => {
    const h = harness();
    const repo = await h.provider(Date.now).getRepository(h.expected.big.name);
    expect(repo.name).toBe(h.expected.big.name);
    expect(repo.default_branch).toBe(h.expected.big.defaultBranch);
    expect(repo.default_branch).not.toBe('main');
    expect(repo.branches).toHaveLength(250);
    const byName = (a: Branch, b: Branch) => a.name.localeCompare(b.name);
    expect([...repo.branches].sort(byName)).toEqual([...h.expected.big.branches].sort(byName));
  });

  it('answers not_found for a repository the provider does not have, and for a malformed name', async () => {
    const h = harness();
    const provider = h.provider(Date.now);
    await expectKind(provider.getRepository(h.expected.missingName), 'not_found', h.secrets);
    await expectKind(provider.getRepository('no-owner'), 'not_found', h.secrets);
    await expectKind(provider.getRepository('../../user'), 'not_found', h.secrets);
  });

  it('answers unreachable when nothing listens, instead of an empty list', async () => {
    const h = harness();
    const provider = h.unreachableProvider();
    await expectKind(provider.listRepositories(), 'unreachable', h.secrets);
    await expectKind(provider.whoami(), 'unreachable', h.secrets);
    await expectKind(provider.getRepository(h.expected.big.name), 'unreachable', h.secrets);
  });

  it('serves a second listing within the TTL from memory, and asks again after it', async () => {
    const h = harness();
    const time = clock();
    const provider = h.provider(time.now);
    const start = h.requestCount();
    const first = await provider.listRepositories();
    const afterFirst = h.requestCount();
    const perListing = afterFirst - start;
    expect(await provider.listRepositories()).toEqual(first);
    expect(h.requestCount()).toBe(afterFirst);
    time.advance(31_000);
    const before = h.revalidation?.();
    expect(await provider.listRepositories()).toEqual(first);
    expect(h.requestCount()).toBeGreaterThan(afterFirst);
    if (h.revalidation && before) {
      // Every page was asked for with its ETag and the provider answered 304 each time.
      const after = h.revalidation();
      const asked = after.total - before.total;
      expect(asked).toBe(perListing);
      expect(after.sentIfNoneMatch - before.sentIfNoneMatch).toBe(asked);
      expect(after.served304 - before.served304).toBe(asked);
    } else {
      // No validator to send: the whole listing is fetched again, once.
      expect(h.requestCount() - afterFirst).toBe(perListing);
    }
  });

  if (!scope.hosted) return;

  it('rejects a bad token as auth_failed without repeating it', async () => {
    const h = harness();
    const provider = required(h.badTokenProvider, 'badTokenProvider')();
    await expectKind(provider.whoami(), 'auth_failed', h.secrets);
    await expectKind(provider.listRepositories(), 'auth_failed', h.secrets);
  });

  it('reports a rate limit with the time to wait', async () => {
    const h = harness();
    const budget = required(h.rateLimit, 'rateLimit');
    budget.limit(0, 120);
    const error = await expectKind(h.provider(Date.now).listRepositories(), 'rate_limited', h.secrets).finally(() =>
      budget.clear(),
    );
    if (h.rateLimitSaysWhen) {
      expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(110);
      expect(error.retryAfterSeconds).toBeLessThanOrEqual(121);
    } else {
      expect(error.retryAfterSeconds).toBeUndefined();
    }
  });

  it('fails the whole list when a later page is refused, never returning part of it', async () => {
    const h = harness();
    const budget = required(h.rateLimit, 'rateLimit');
    const before = h.requestCount();
    await h.provider(Date.now).listRepositories();
    const requests = h.requestCount() - before;
    budget.limit(requests - 1, 60);
    await expectKind(h.provider(Date.now).listRepositories(), 'rate_limited', h.secrets).finally(() => budget.clear());
  });
}

function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`a hosted provider's harness needs ${name}`);
  return value;
}

/** Awaits a rejection of the given kind whose message names none of the secrets. */
export async function expectKind(promise: Promise<unknown>, kind: VcsErrorKind, secrets: readonly string[]): Promise<VcsError> {
  const error = await promise.then(
    (value) => {
      throw new Error(`expected VcsError ${kind}, got ${JSON.stringify(value).slice(0, 200)}`);
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(VcsError);
  const vcsError = error as VcsError;
  expect({ kind: vcsError.kind, message: vcsError.message }).toMatchObject({ kind });
  for (const secret of secrets) expect(vcsError.message).not.toContain(secret);
  return vcsError;
}
