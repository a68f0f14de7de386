/**
 * What the version-control API tests share: requests through the service with a token, the hosted
 * providers and their stand-ins (the real provider code talks to them over loopback, pointed there
 * by the profile's baseUrl), and reading a paged list to its end the way a client would.
 */
import type { LightMyRequestResponse } from 'fastify';
import type { VcsProviderName } from '../../src/vcs/provider.js';
import { startBitbucketStandin } from '../standins/vcs/bitbucket-standin.js';
import type { VcsFixture } from '../standins/vcs/fixture.js';
import { startGiteaStandin } from '../standins/vcs/gitea-standin.js';
import { startGitHubStandin } from '../standins/vcs/github-standin.js';
import { startGitLabStandin } from '../standins/vcs/gitlab-standin.js';
import type { RateBudget, StandinServer } from '../standins/vcs/standin-server.js';
import type { TestService } from '../support/test-service.js';

export interface HostedStandin {
  server: StandinServer;
  budget: RateBudget;
  baseUrl: string;
}

export interface HostedCase {
  provider: Exclude<VcsProviderName, 'git'>;
  start(fixture: VcsFixture): Promise<HostedStandin>;
  /** GitLab's fixture nests groups (`acme/platform/infra/service-003`). */
  nested: boolean;
  /** Seconds the 429 asks for when the stand-in's limit resets in 120 s (Bitbucket names no reset). */
  retryAfter: { min: number; max: number };
}

const resetIn120 = { min: 110, max: 121 };

export const HOSTED_CASES: HostedCase[] = [
  { provider: 'github', start: startGitHubStandin, nested: false, retryAfter: resetIn120 },
  { provider: 'gitlab', start: (f) => startGitLabStandin(f), nested: true, retryAfter: resetIn120 },
  // Bitbucket's 429 carries no reset: the service's default of 60 s answers.
  { provider: 'bitbucket', start: startBitbucketStandin, nested: false, retryAfter: { min: 60, max: 60 } },
  { provider: 'gitea', start: startGiteaStandin, nested: false, retryAfter: resetIn120 },
];

export function call(
  s: TestService,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  options: { payload?: unknown; token?: string } = {},
): Promise<LightMyRequestResponse> {
  return s.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${options.token ?? s.token}` },
    ...(options.payload === undefined ? {} : { payload: options.payload as Record<string, unknown> }),
  });
}

/** Creates a profile and returns its record; fails the test with the answer when it is not 201. */
export async function createProfile(s: TestService, payload: Record<string, unknown>, token?: string) {
  const res = await call(s, 'POST', '/api/v1/vc-profiles', { payload, token });
  if (res.statusCode !== 201) throw new Error(`profile not created: ${res.statusCode} ${res.body}`);
  return res.json() as { uuid: string; account: string | null; [key: string]: unknown };
}

export interface ListedRepo {
  name: string;
  default_branch: string | null;
  private: boolean | null;
  web_url: string | null;
}

/** Follows the `Link: rel="next"` header from `firstUrl` to the end; every page's answer is kept. */
export async function readAllPages(s: TestService, firstUrl: string) {
  const pages: { status: number; data: ListedRepo[]; meta: { next_cursor: string | null; limit: number }; link?: string }[] = [];
  let url: string | null = firstUrl;
  while (url !== null) {
    const res = await call(s, 'GET', url);
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    const body = res.json() as { data: ListedRepo[]; meta: { next_cursor: string | null; limit: number } };
    const link = res.headers.link as string | undefined;
    pages.push({ status: res.statusCode, ...body, link });
    url = link ? (/<([^>]+)>;\s*rel="next"/.exec(link)?.[1] ?? null) : null;
    if (pages.length > 50) throw new Error('paging did not end');
  }
  return pages;
}
