/**
 * What the deployment API tests share: a service with the recording deploy steps, a GitHub
 * stand-in (the real provider code checks repository and branch against it), and a git host
 * stand-in for `git` profiles (support/git-host-standin.ts).
 */
import type { LightMyRequestResponse } from 'fastify';
import { makeFixture, type VcsFixture } from '../standins/vcs/fixture.js';
import { type GitHubStandin, startGitHubStandin } from '../standins/vcs/github-standin.js';
import { integrationsWithGitHost } from '../support/git-host-standin.js';
import { type RecordingDeploySteps, recordingDeploySteps } from '../support/recording-deploy-steps.js';
import { LOOPBACK_TARGETS, seedServer, startTestService, type TestService, waitForStatus } from '../support/test-service.js';

export interface DeployWorld {
  s: TestService;
  steps: RecordingDeploySteps;
  github: GitHubStandin;
  fixture: VcsFixture;
  ids: { server: string; serverUser: string };
  githubProfile: string;
  gitProfile: string;
  stop(): Promise<void>;
}

/** Remotes the git profile lists: one over ssh (a deploy key), one over https with credentials in its URL. */
export const SSH_REMOTE = 'git@git.example.net:acme/shop.git';
export const HTTPS_REMOTE_SECRET = 'Remote-Pass-NoSecretAtRest-5d1e';
export const HTTPS_REMOTE = `https://deployer:${HTTPS_REMOTE_SECRET}@git.example.net/acme/private.git`;

export async function startDeployWorld(
  options: { deploySteps?: boolean; env?: Record<string, string> } = {},
): Promise<DeployWorld> {
  const fixture = makeFixture();
  const github = await startGitHubStandin(fixture);
  const env = { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS, ...options.env };
  const integrations = integrationsWithGitHost(env);
  const steps = recordingDeploySteps();
  const s = await startTestService({
    env,
    integrations,
    cancelPollMs: 25,
    ...(options.deploySteps === false ? {} : { deploySteps: steps }),
  });
  const ids = await seedServer(s, { php: ['8.2'], node: '20.11.1' });
  const githubProfile = (
    await expectStatus(
      call(s, 'POST', '/api/v1/vc-profiles', {
        payload: { provider: 'github', name: 'gh', token: fixture.token, baseUrl: github.baseUrl },
      }),
      201,
    )
  ).json().uuid as string;
  const gitProfile = (
    await expectStatus(
      call(s, 'POST', '/api/v1/vc-profiles', {
        payload: { provider: 'git', name: 'plain', repositories: [SSH_REMOTE, HTTPS_REMOTE] },
      }),
      201,
    )
  ).json().uuid as string;
  return {
    s,
    steps,
    github,
    fixture,
    ids,
    githubProfile,
    gitProfile,
    async stop() {
      await s.stop();
      await github.server.close();
    },
  };
}

export function call(
  s: TestService,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  options: { payload?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return s.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${options.token ?? s.token}`,
      ...(options.payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.payload === undefined ? {} : { payload: JSON.stringify(options.payload) }),
  });
}

export async function expectStatus(pending: Promise<LightMyRequestResponse>, status: number): Promise<LightMyRequestResponse> {
  const res = await pending;
  if (res.statusCode !== status) throw new Error(`expected ${status}, got ${res.statusCode}: ${res.body}`);
  return res;
}

/** Creates a site on the world's dry-run server and waits until it is installed. */
export async function installedSite(w: DeployWorld, type: string, domain: string, options: Record<string, unknown> = {}) {
  const res = await expectStatus(
    call(w.s, 'POST', '/api/v1/sites', { payload: { ...w.ids, type, domain, ssl: false, options } }),
    202,
  );
  const uuid = res.json().uuid as string;
  await waitForStatus(w.s, uuid, ['installed'], 20_000);
  return uuid;
}

/** Polls a deployment until its status is one of `states`. */
export async function waitForDeployment(w: DeployWorld, uuid: string, states: string[], timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const body = (await expectStatus(call(w.s, 'GET', `/api/v1/deployments/${uuid}`), 200)).json();
    if (states.includes(body.status)) return body;
    if (Date.now() > until) throw new Error(`deployment ${uuid} stayed ${body.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every error's field and code, for comparing a problem's list. */
export const fieldsOf = (res: LightMyRequestResponse) =>
  (res.json().errors as { field: string; code: string }[]).map((e) => `${e.field}:${e.code}`).sort();
