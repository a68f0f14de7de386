/**
 * No secret at rest in clear (issue 10, ARCHITECTURE §2 "encrypted at rest"): secrets go in through
 * the API — DNS credentials, a VC token checked against a stand-in, a server's generated SSH key,
 * site database passwords given and generated, a WordPress admin password, replayable responses
 * carrying a generated password — and the database is then read as stored: on SQLite the raw bytes
 * of the file and its WAL plus a `VACUUM INTO` copy, on PostgreSQL every row of every table as text.
 * None of the secrets may appear, nor its hex or base64 form; API tokens only as SHA-256 hashes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRecipes } from '../../src/app/recipes.js';
import { makeFixture } from '../standins/vcs/fixture.js';
import { type GitHubStandin, startGitHubStandin } from '../standins/vcs/github-standin.js';
import { integrationsWithGitHost } from '../support/git-host-standin.js';
import { recordingDeploySteps } from '../support/recording-deploy-steps.js';
import {
  LOOPBACK_TARGETS,
  seedServer,
  startTestService,
  TEST_DB,
  type TestService,
  waitForStatus,
} from '../support/test-service.js';

/** The stored forms a secret must not take: as given, and its hex, base64 and base64url encodings. */
function forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [secret, bytes.toString('hex'), bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')];
}

/** Every row of every table of the public schema, as text. */
async function postgresDump(s: TestService): Promise<Buffer> {
  const tables = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`.execute(
    s.storage.db,
  );
  const parts: string[] = [];
  for (const { table_name } of tables.rows) {
    const rows = await sql<{ j: string }>`SELECT row_to_json(t)::text AS j FROM ${sql.table(table_name)} t`.execute(s.storage.db);
    parts.push(`-- ${table_name}`, ...rows.rows.map((r) => r.j));
  }
  return Buffer.from(parts.join('\n'), 'utf8');
}

/** The database file and its WAL as the service left them, and a `VACUUM INTO` copy of the whole. */
async function sqliteDump(s: TestService): Promise<Buffer> {
  const list = await sql<{ name: string; file: string }>`PRAGMA database_list`.execute(s.storage.db);
  const file = list.rows.find((r) => r.name === 'main')?.file ?? '';
  expect(file).toMatch(/siteplane\.db$/);
  const copy = join(dirname(file), 'vacuum-copy.db');
  await sql`VACUUM INTO ${sql.lit(copy)}`.execute(s.storage.db);
  const wal = `${file}-wal`;
  const parts = [readFileSync(file), existsSync(wal) ? readFileSync(wal) : Buffer.alloc(0), readFileSync(copy)];
  expect(parts[0]?.length).toBeGreaterThan(0);
  return Buffer.concat(parts);
}

describe(`no secret is stored in clear (${TEST_DB}; issue 10, ARCHITECTURE §2)`, () => {
  let s: TestService;
  let github: GitHubStandin;
  const fixture = makeFixture();
  /** Secrets by what they are, so a failure names the leak. */
  const secrets = new Map<string, string>();
  let stored: Buffer;
  let privateKeyPem: string;
  let publicKey: string;
  let deployKeyPem: string;
  let deployPublicKey: string;

  beforeAll(async () => {
    github = await startGitHubStandin(fixture);
    const env = { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS };
    s = await startTestService({
      recipes: defaultRecipes,
      env,
      integrations: integrationsWithGitHost(env),
      deploySteps: recordingDeploySteps(),
    });
    const auth = { authorization: `Bearer ${s.token}` };
    const post = async (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const res = await s.app.inject({ method: 'POST', url, headers: { ...auth, ...headers }, payload });
      if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return res;
    };

    // DNS profiles of every provider, each credential a secret.
    const dns = {
      cloudflare: { apiToken: 'cf-token-NoSecretAtRest-7f3a91' },
      digitalocean: { token: 'do-token-NoSecretAtRest-2b8c44' },
      porkbun: { apiKey: 'pk1_NoSecretAtRest_a91f0c', secretApiKey: 'sk1_NoSecretAtRest_5e62d8' },
      aws: { accessKeyId: 'AKIANOSECRETATREST01', secretAccessKey: 'aws/NoSecretAtRest+3c9e7d11f0b2', region: 'eu-west-1' },
    };
    for (const [provider, credentials] of Object.entries(dns)) {
      await post('/api/v1/dns-profiles', { provider, name: provider, credentials });
      for (const [field, value] of Object.entries(credentials))
        if (field !== 'region') secrets.set(`dns ${provider}.${field}`, value);
    }

    // A VC profile whose token the GitHub stand-in checks.
    await post('/api/v1/vc-profiles', { provider: 'github', name: 'gh', token: fixture.token, baseUrl: github.baseUrl });
    secrets.set('vc token', fixture.token);

    // An outgoing webhook: its generated signing secret is in the (replayable) answer only.
    const hook = (
      await post('/api/v1/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['site.*'] }, { 'idempotency-key': 'hook-1' })
    ).json() as { secret: string };
    secrets.set('outgoing webhook secret', hook.secret);
    secrets.set('outgoing webhook key', hook.secret.slice('whsec_'.length));

    // An ssh server: Siteplane generates its key pair; the private key is learnt through the secret box.
    const server = (
      await post('/api/v1/servers', { name: 'ssh-1', ip: '10.20.30.40', connection: 'ssh', sshUser: 'root' })
    ).json();
    const row = await s.storage.db.selectFrom('servers').selectAll().where('uuid', '=', server.uuid).executeTakeFirstOrThrow();
    expect(row.private_key_enc).toMatch(/^v1\./);
    privateKeyPem = s.useCases.secrets.open(row.private_key_enc ?? '');
    expect(privateKeyPem).toContain('PRIVATE KEY-----');
    publicKey = JSON.stringify(server);

    // Sites on a dry-run server through the real recipes (every command they would run is stored).
    const ids = await seedServer(s, { php: ['8.2'], node: null, mysql: 'mariadb1011' });
    const sites: string[] = [];
    const createSite = async (domain: string, type: string, options: Record<string, unknown>, key?: string) => {
      const res = await post(
        '/api/v1/sites',
        { ...ids, type, domain, ssl: false, options },
        key ? { 'idempotency-key': key } : {},
      );
      expect(res.statusCode).toBe(202);
      sites.push(res.json().uuid);
      return res.json() as { uuid: string; generated_database_password?: string };
    };
    await createSite('given.example.com', 'laravel', {
      phpVersion: '8.2',
      shouldCreateDatabaseAndUser: true,
      databaseUser: 'given_user',
      databasePassword: 'Db-Pass-NoSecretAtRest-91c2e7',
    });
    secrets.set('site databasePassword', 'Db-Pass-NoSecretAtRest-91c2e7');
    const wp = await createSite('blog.example.com', 'wordpress', {
      wpAdminSetup: {
        title: 'Blog',
        adminUser: 'admin',
        adminPassword: 'Wp-Admin-NoSecretAtRest-4d8a1f',
        adminEmail: 'a@example.com',
      },
    });
    secrets.set('wpAdminSetup.adminPassword', 'Wp-Admin-NoSecretAtRest-4d8a1f');
    if (wp.generated_database_password) secrets.set('wordpress generated password', wp.generated_database_password);
    const generated = await createSite('generated.example.com', 'php', { phpVersion: '8.2', shouldCreateDatabaseAndUser: true });
    expect(generated.generated_database_password).toMatch(/^[A-Za-z0-9]{32}$/);
    secrets.set('generated database password', generated.generated_database_password ?? '');
    const keyed = await createSite(
      'keyed.example.com',
      'laravel',
      { phpVersion: '8.2', shouldCreateDatabaseAndUser: true },
      'no-secret-at-rest-1',
    );
    expect(keyed.generated_database_password).toMatch(/^[A-Za-z0-9]{32}$/);
    secrets.set('idempotent response password', keyed.generated_database_password ?? '');
    const replay = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { ...auth, 'idempotency-key': 'no-secret-at-rest-1' },
      payload: {
        ...ids,
        type: 'laravel',
        domain: 'keyed.example.com',
        ssl: false,
        options: { phpVersion: '8.2', shouldCreateDatabaseAndUser: true },
      },
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().generated_database_password).toBe(keyed.generated_database_password);
    for (const uuid of sites) {
      const done = await waitForStatus(s, uuid, ['installed', 'failed'], 20_000);
      expect(done.status, JSON.stringify(done)).toBe('installed');
    }

    // A push webhook (issue 11): its shared secret sealed, its trigger URL's token only hashed; a
    // GitLab hook carries the secret itself in a header, which is checked and not kept.
    const webhook = (await post(`/api/v1/sites/${sites[0]}/webhook`, { branches: [] })).json();
    secrets.set('webhook secret', webhook.secret);
    secrets.set('webhook trigger token', String(webhook.trigger_url).split('/').at(-1) ?? '');
    await s.app.inject({
      method: 'POST',
      url: `/api/v1/hooks/gitlab/${sites[0]}`,
      headers: { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': webhook.secret, 'content-type': 'application/json' },
      payload: '{"object_kind":"push","ref":"refs/tags/v1"}',
    });
    // Deployments: environment values, a git remote's credentials, a site's generated deploy key,
    // and a deploy whose steps log the token and values they were given (the log is redacted).
    const put = async (url: string, payload: unknown) => {
      const res = await s.app.inject({ method: 'PUT', url, headers: auth, payload: payload as Record<string, unknown> });
      if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return res;
    };
    const remotePassword = 'Remote-Pass-NoSecretAtRest-5d1e';
    const gitProfile = (
      await post('/api/v1/vc-profiles', {
        provider: 'git',
        name: 'plain',
        repositories: [
          'git@git.example.net:acme/shop.git',
          `https://deployer:${remotePassword}@git.example.net/acme/private.git`,
        ],
      })
    ).json().uuid;
    secrets.set('git remote password', remotePassword);
    const [laravelSite, , phpSite] = sites as [string, string, string, string];
    const bound = (
      await put(`/api/v1/sites/${laravelSite}/source`, { vcProfile: gitProfile, repository: 'acme/shop', branch: 'main' })
    ).json();
    expect(bound.auth).toBe('deploy_key');
    const source = await s.storage.db
      .selectFrom('site_sources')
      .selectAll()
      .where('site_uuid', '=', laravelSite)
      .executeTakeFirstOrThrow();
    deployKeyPem = s.useCases.secrets.open(source.deploy_private_key_enc ?? '');
    deployPublicKey = bound.deploy_public_key;
    await put(`/api/v1/sites/${phpSite}/source`, { vcProfile: gitProfile, repository: 'acme/private', branch: 'main' });
    const envValue = 'Env-Value-NoSecretAtRest-3f9a27';
    for (const site of [laravelSite, phpSite]) {
      const res = await s.app.inject({
        method: 'PATCH',
        url: `/api/v1/sites/${site}/environment`,
        headers: auth,
        payload: { set: { APP_KEY: { value: envValue, scope: 'runtime' } } },
      });
      expect(res.statusCode, res.body).toBe(200);
      const deployed = (await post(`/api/v1/sites/${site}/deployments`, {})).json();
      for (let i = 0; i < 400; i++) {
        const d = (await s.app.inject({ method: 'GET', url: `/api/v1/deployments/${deployed.uuid}`, headers: auth })).json();
        if (d.status !== 'queued' && d.status !== 'running') {
          expect(d.status).toBe('succeeded');
          break;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    secrets.set('environment value', envValue);

    for (const [name, token] of [
      ['api token (write)', s.token],
      ['api token (read)', s.readToken],
      ['api token (other tenant)', s.otherTenantToken],
    ] as const)
      secrets.set(name, token);

    stored = TEST_DB === 'postgres' ? await postgresDump(s) : await sqliteDump(s);
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await github?.server.close();
  });

  it('stores none of the secrets in clear, nor in hex or base64', () => {
    expect(secrets.size).toBeGreaterThanOrEqual(12);
    // The dump holds what was written: names, domains and the commands the dry-run server recorded.
    for (const clear of ['given.example.com', 'given_user', 'porkbun', 'would run: '])
      expect(stored.includes(clear), clear).toBe(true);
    const leaks: string[] = [];
    for (const [name, secret] of secrets) {
      expect(secret.length, name).toBeGreaterThan(8);
      for (const form of forms(secret)) if (stored.includes(form)) leaks.push(`${name} as ${form}`);
    }
    expect(leaks).toEqual([]);
  });

  it('stores API tokens only as their SHA-256 hashes', () => {
    for (const token of [s.token, s.readToken, s.otherTenantToken]) {
      expect(stored.includes(token)).toBe(false);
      expect(stored.includes(createHash('sha256').update(token).digest('hex'))).toBe(true);
    }
  });

  it('stores the generated SSH private key only sealed: neither the PEM nor its base64 body', () => {
    const lines = privateKeyPem.split('\n').filter((l) => l && !l.startsWith('-----'));
    const body = lines.join('');
    expect(body.length).toBeGreaterThan(100);
    expect(stored.includes(privateKeyPem.trim())).toBe(false);
    expect(stored.includes(body)).toBe(false);
    // Lines of the body past the fixed header, except any that happen to be the public key's own.
    for (const line of lines.slice(1)) if (!publicKey.includes(line)) expect(stored.includes(line), line).toBe(false);
  });

  it('stores a site’s generated deploy key only sealed (deployments)', () => {
    const lines = deployKeyPem.split('\n').filter((l) => l && !l.startsWith('-----'));
    expect(lines.join('').length).toBeGreaterThan(100);
    expect(stored.includes(lines.join(''))).toBe(false);
    for (const line of lines.slice(1)) if (!deployPublicKey.includes(line)) expect(stored.includes(line), line).toBe(false);
  });
});
