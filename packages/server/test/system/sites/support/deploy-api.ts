import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describeOperation, type Harness, type JsonBody } from './harness.js';

/**
 * What the deploy suites share: the API in-process with a write token of their own (the harness's
 * client has no PUT or PATCH), a status check that says what was refused, and a wait for a
 * deployment (or rollback) to end. The harness and token are read when called: suites set them in
 * their beforeAll.
 */
export interface Answer {
  status: number;
  body: JsonBody;
}

export function deployApi(harness: () => Harness, token: () => string) {
  async function api(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown): Promise<Answer> {
    const res = await harness().service.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${token()}`,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    return { status: res.statusCode, body: res.body ? (JSON.parse(res.body) as JsonBody) : {} };
  }

  async function must(status: number, answer: Promise<Answer>, what: string): Promise<JsonBody> {
    const res = await answer;
    if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Polls a deployment until it ends; throws with its operation unless it ended as `want`. */
  async function finished(
    uuid: string,
    want: 'succeeded' | 'failed' = 'succeeded',
    { timeoutMs = 900_000, pollMs = 200 } = {},
  ): Promise<JsonBody> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const d = await must(200, api('GET', `/api/v1/deployments/${uuid}`), `GET deployment ${uuid}`);
      if (d.status === want) return d;
      if (['succeeded', 'failed', 'cancelled'].includes(d.status) || Date.now() > until)
        throw new Error(`deployment ${d.status}: ${describeOperation(await harness().operation(d.operation.uuid))}`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  /**
   * A plain-git profile of the test host's repositories (served by git-daemon.ts as
   * `git://<address>:<port>/acme/<name>.git`) and each site bound to its repository's main branch.
   */
  async function bindToHostRepositories(
    profileName: string,
    git: { address: string; port: number },
    bindings: ReadonlyArray<readonly [site: JsonBody, repository: string]>,
  ): Promise<JsonBody> {
    const profile = await must(
      201,
      api('POST', '/api/v1/vc-profiles', {
        provider: 'git',
        name: profileName,
        repositories: bindings.map(([, name]) => `git://${git.address}:${git.port}/acme/${name}.git`),
      }),
      'POST /vc-profiles',
    );
    for (const [site, name] of bindings) {
      await must(
        200,
        api('PUT', `/api/v1/sites/${site.uuid}/source`, { vcProfile: profile.uuid, repository: `acme/${name}`, branch: 'main' }),
        `PUT source acme/${name}`,
      );
    }
    return profile;
  }

  return { api, must, finished, bindToHostRepositories };
}

/** A fixture app's files, path → content (relative to its directory). */
export function fixtureFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, entry);
    if (statSync(path).isFile()) files[relative(dir, path)] = readFileSync(path, 'utf8');
  }
  return files;
}
