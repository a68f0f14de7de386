import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSshKeyPair } from '../../../src/crypto/ssh-key-pair.js';
import { createToken } from '../../../src/storage/tokens.js';
import { HOSTED_CASES } from '../../http/vc-api.js';
import type { DeployKeyFixture } from '../../standins/vcs/deploy-key-endpoints.js';
import { makeFixture } from '../../standins/vcs/fixture.js';
import { LOOPBACK_TARGETS, TEST_DB } from '../../support/test-service.js';
import { requireTestHost } from '../support/test-host.js';
import { ensureHostGit } from './support/git-daemon.js';
import { commitAndPush } from './support/git-work-tree.js';
import { describeOperation, Harness, type JsonBody, removeSystemUser, runId } from './support/harness.js';
import { curlUntil, mustRun, run, useHost } from './support/host.js';

/**
 * Issue 11 item 1, private repositories over ssh, for real: a `git` account on the test host
 * serves bare repositories through the host's own sshd, admitting only the keys in its
 * authorized_keys, each restricted to git-shell (no pty, no forwarding) — what a self-hosted git
 * server does with deploy keys. That account is test infrastructure, not something Siteplane
 * installs. (a) A plain git profile listing `git@<host>:acme/app.git`: bound before the user added
 * the site's key (the binding says the remote refused it, a deploy fails naming the cause), then
 * with the key added (branch checked with it, deploy served); a changed host key is refused.
 * (b) Each hosted provider's stand-in (GitHub, GitLab, Bitbucket, Gitea), whose ssh clone address
 * is that account (`git@127.0.0.1:acme/monorepo.git`, as the host sees it): the key is registered
 * through the stand-in's API, which the test hands to the git account as the provider's own sshd
 * would, and the deploy fetches over ssh with it; unbinding removes it at the provider.
 * Throughout: the private key is on the host only while a fetch runs, in a 0600 file of the site's
 * user, and never in an answer, an operation log or the service's log; unbinding forgets it.
 */
const host = requireTestHost();
useHost(host);
const id = runId();
const user = `spk${id}`;
const GIT_HOME = '/home/git';
const WORK = `/srv/siteplane-ssh-work-${id}`;
const domain = (label: string) => `${label}-${id}.siteplane.test`;

let h: Harness;
let base: string;
let token: string;
const serviceLog: string[] = [];
let knownHostsDir: string;
const originalPath = process.env.PATH ?? '';

interface Answer {
  status: number;
  body: JsonBody;
  text: string;
}
/** Every answer the API gave in this file, to look for the private key in. */
const answers: string[] = [];

async function api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
  });
  const text = await res.text();
  answers.push(text);
  return { status: res.status, body: text ? (JSON.parse(text) as JsonBody) : {}, text };
}

async function must(status: number, answer: Promise<Answer>, what: string): Promise<JsonBody> {
  const res = await answer;
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body;
}

async function deploy(site: JsonBody): Promise<{ deployment: JsonBody; log: string }> {
  const started = await must(202, api('POST', `/api/v1/sites/${site.uuid}/deployments`, {}), 'POST deployments');
  const until = Date.now() + 600_000;
  for (;;) {
    const d = await must(200, api('GET', `/api/v1/deployments/${started.uuid}`), 'GET deployment');
    if (['succeeded', 'failed', 'cancelled'].includes(d.status)) {
      const op = await must(200, api('GET', `/api/v1/operations/${d.operation.uuid}?limit=1000`), 'GET operation');
      return { deployment: { ...d, operationView: op }, log: JSON.stringify(op) };
    }
    if (Date.now() > until) throw new Error(`deployment ${started.uuid} stayed ${d.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The site's private key, as the service keeps it sealed (the test opens it to look for it). */
async function privateKeyOf(site: JsonBody): Promise<string> {
  const row = await h.service.storage.db
    .selectFrom('site_sources')
    .select('deploy_private_key_enc')
    .where('site_uuid', '=', site.uuid)
    .executeTakeFirstOrThrow();
  if (!row.deploy_private_key_enc) throw new Error('no private key stored');
  return h.service.useCases.secrets.open(row.deploy_private_key_enc);
}

/**
 * Lines of a private key's base64 body but the first (`openssh-key-v1`, no cipher, one ssh-ed25519
 * key: the same in every such key, the host's own included); any one of them in a file or a log is
 * the key leaking. A public key line is taken whole.
 */
const keyLines = (key: string) =>
  key.startsWith('-----')
    ? key
        .split('\n')
        .filter((l) => l.length > 40 && !l.startsWith('-----'))
        .slice(1)
    : [key.trim()];

/** Admits a public key to the git account, restricted to git-shell, as a git server does. */
async function admitKey(publicKey: string): Promise<void> {
  const line = `restrict,command="sleep 1; exec git-shell -c \\"$SSH_ORIGINAL_COMMAND\\"" ${publicKey.trim()}\n`;
  await mustRun('sh', ['-c', 'cat >> "$1" && chown git:git "$1" && chmod 600 "$1"', 'sh', `${GIT_HOME}/.ssh/authorized_keys`], {
    input: line,
  });
}

const BRANCH: Record<string, string> = { 'acme/app': 'main', 'acme/monorepo': 'trunk' };

/** Commits into work tree `name`, pushes to the git account's bare repository, hands it to git. */
async function commit(name: string, files: Record<string, string>, message: string): Promise<string> {
  // root pushes (git refuses a repository of another owner), then hands it back to git.
  await mustRun('chown', ['-R', 'root:root', `${GIT_HOME}/${name}.git`]);
  const sha = await commitAndPush(`${WORK}/${name}`, `${GIT_HOME}/${name}.git`, files, message, BRANCH[name]);
  await mustRun('chown', ['-R', 'git:git', `${GIT_HOME}/${name}.git`]);
  return sha;
}

/**
 * Files on the host holding any line of the key (the site user's home, temporary directories,
 * root's, logs, configuration, Siteplane's state), with their owner and mode.
 */
async function filesHolding(privateKey: string): Promise<string[]> {
  const patterns = keyLines(privateKey).join('\n');
  const found = await run(
    'sh',
    [
      '-c',
      'grep -rlF -f - /home /tmp /var/tmp /root /var/log /etc /var/lib/siteplane /srv 2>/dev/null | while read -r f; do stat -c "%U %a %n" "$f"; done',
    ],
    { input: patterns },
  );
  return found.stdout.split('\n').filter(Boolean);
}

const expectNoLeak = (privateKey: string, text: string, where: string) => {
  for (const line of keyLines(privateKey)) expect(text.includes(line), `a line of the private key in ${where}`).toBe(false);
};

/** Runs a shell script on the host as the site's user (what that user could do to its own files). */
const asSiteUser = (script: string, args: string[], input?: string) =>
  mustRun('runuser', ['-u', user, '--', 'sh', '-c', script, 'sh', ...args], input === undefined ? {} : { input });

describe.skipIf(!process.env.SITEPLANE_SYSTEM_TESTS)(`deploys over ssh with a deploy key on ${TEST_DB} (issue 11 item 1)`, () => {
  let plainSite: JsonBody;
  let hostedSite: JsonBody;

  beforeAll(async () => {
    // git on the host is the deploy steps' to install (ensure git); the git account uses it first.
    await ensureHostGit();
    // The git server account: a shell only to run the forced command; a '*' password, not a
    // locked one ('!'), which sshd without PAM refuses.
    await run('userdel', ['-r', 'git']);
    await mustRun('useradd', ['-m', '-d', GIT_HOME, '-s', '/bin/sh', 'git']);
    await mustRun('usermod', ['-p', '*', 'git']);
    await mustRun('install', ['-d', '-m', '700', '-o', 'git', '-g', 'git', `${GIT_HOME}/.ssh`]);
    for (const name of ['acme/app', 'acme/monorepo']) {
      await mustRun('git', ['init', '-q', '--bare', '-b', name === 'acme/app' ? 'main' : 'trunk', `${GIT_HOME}/${name}.git`]);
      await mustRun('git', ['init', '-q', '-b', name === 'acme/app' ? 'main' : 'trunk', `${WORK}/${name}`]);
    }
    await mustRun('chown', ['-R', 'git:git', GIT_HOME]);

    // This machine checks the plain git remote with `git ls-remote` over ssh, trusting only host
    // keys the operator put in its known_hosts: a known_hosts with the test host's key stands in
    // for that (no key of this machine is offered; the service offers the site's).
    knownHostsDir = await mkdtemp(join(tmpdir(), 'siteplane-ssh-known-'));
    const hostKey = (await readFile(join(host.root, 'etc/ssh/ssh_host_ed25519_key.pub'), 'utf8')).trim().split(/\s+/);
    await writeFile(join(knownHostsDir, 'known_hosts'), `${host.address} ${hostKey[0]} ${hostKey[1]}\n`);
    await mkdir(join(knownHostsDir, 'bin'));
    await writeFile(
      join(knownHostsDir, 'bin', 'ssh'),
      `#!/bin/sh\nexec /usr/bin/ssh -o UserKnownHostsFile='${join(knownHostsDir, 'known_hosts')}' "$@"\n`,
    );
    await chmod(join(knownHostsDir, 'bin', 'ssh'), 0o755);
    process.env.PATH = `${join(knownHostsDir, 'bin')}:${originalPath}`;

    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => serviceLog.push(chunk.toString('utf8')));
    h = await Harness.start({ username: user, env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS }, logStream });
    await h.registerServer();
    base = await h.service.app.listen({ host: '127.0.0.1', port: 0 });
    token = (await createToken(h.service.storage.db, { name: `ssh-${id}`, scope: 'write' })).token;
    const [p, q] = await Promise.all([
      h.createSite('static-html', domain('plain')),
      h.createSite('static-html', domain('hosted')),
    ]);
    [plainSite, hostedSite] = await Promise.all([h.waitInstalled(p, 900_000), h.waitInstalled(q, 900_000)]);
  }, 1_800_000);

  afterAll(async () => {
    process.env.PATH = originalPath;
    await h?.stop();
    await removeSystemUser(user, id).catch(() => undefined);
    await run('userdel', ['-r', 'git']);
    await run('rm', ['-rf', '--', WORK]);
    if (knownHostsDir) await rm(knownHostsDir, { recursive: true, force: true });
  }, 600_000);

  describe('(a) a plain git profile', () => {
    let profile: JsonBody;
    let publicKey: string;

    it('takes a remote that admits deploy keys only, and binds the site before its key is added, saying so', async () => {
      await commit('acme/app', { 'index.html': 'over-ssh-v1' }, 'v1 over ssh');
      const remote = `git@${host.address}:acme/app.git`;
      profile = await must(
        201,
        api('POST', '/api/v1/vc-profiles', { provider: 'git', name: `ssh-${id}`, repositories: [remote] }),
        'POST /vc-profiles',
      );
      // Listed with no default branch: it is read with a site's key only.
      const repos = await must(200, api('GET', `/api/v1/vc-profiles/${profile.uuid}/repos`), 'GET repos');
      expect(repos.data).toEqual([expect.objectContaining({ name: 'acme/app', default_branch: null })]);

      const source = await must(
        200,
        api('PUT', `/api/v1/sites/${plainSite.uuid}/source`, { vcProfile: profile.uuid, repository: 'acme/app', branch: 'main' }),
        'PUT source',
      );
      expect(source).toMatchObject({
        auth: 'deploy_key',
        deploy_public_key: expect.stringMatching(/^ssh-ed25519 AAAA/),
        deploy_key_registration: { status: 'not_registered', provider_key_id: null },
      });
      expect(source.deploy_key_registration.reason).toMatch(/refused the site's deploy key.*Permission denied \(publickey\)/);
      publicKey = source.deploy_public_key;
    }, 120_000);

    it('fails a deploy while the key is not added, naming the cause; the key file is gone after', async () => {
      const { deployment, log } = await deploy(plainSite);
      expect(deployment.status).toBe('failed');
      expect(deployment.operationView.error).toMatchObject({
        step: 'fetch',
        message: expect.stringMatching(/the git server refused the site's deploy key \(.*Permission denied \(publickey\)/),
      });
      const privateKey = await privateKeyOf(plainSite);
      expectNoLeak(privateKey, log, 'the failed operation');
      expect(await filesHolding(privateKey)).toEqual([]);
    }, 900_000);

    it('with the key added: the branch is checked with it, the deploy fetches over ssh and serves the commit', async () => {
      await admitKey(publicKey);
      const source = await must(
        200,
        api('PUT', `/api/v1/sites/${plainSite.uuid}/source`, { vcProfile: profile.uuid, repository: 'acme/app', branch: 'main' }),
        'PUT source again',
      );
      expect(source).toMatchObject({
        deploy_public_key: publicKey,
        deploy_key_registration: { status: 'registered', provider_key_id: null, reason: null },
      });
      // Checked with the key now: an unknown branch is refused.
      const wrong = await api('PUT', `/api/v1/sites/${plainSite.uuid}/source`, {
        vcProfile: profile.uuid,
        repository: 'acme/app',
        branch: 'nope',
      });
      expect(wrong.status).toBe(422);
      expect(wrong.body.errors).toEqual([expect.objectContaining({ field: 'branch', code: 'not_found' })]);

      const privateKey = await privateKeyOf(plainSite);
      // While the fetch runs (the git server waits 1 s before answering): the key's one file.
      const watch = run(
        'sh',
        [
          '-c',
          'for i in $(seq 1 2400); do for f in "$1"/.siteplane-deploy-*.key; do [ -f "$f" ] && { stat -c "%U %G %a %n" "$f"; exit 0; }; done; sleep 0.05; done; exit 1',
          'sh',
          `/home/${user}`,
        ],
        { timeoutMs: 300_000 },
      );
      const { deployment, log } = await deploy(plainSite);
      if (deployment.status !== 'succeeded') throw new Error(describeOperation(deployment.operationView));
      const seen = await watch;
      expect(seen.code).toBe(0);
      expect(seen.stdout.trim()).toMatch(
        new RegExp(`^${user} ${user} 600 /home/${user}/\\.siteplane-deploy-[0-9a-f-]{36}\\.key$`),
      );
      expect(deployment.commit).toMatchObject({ message: 'v1 over ssh' });
      const page = await curlUntil(plainSite.domain, '/', (a) => a.status === 200 && a.body.trim() === 'over-ssh-v1', 10_000);
      expect(page.body.trim()).toBe('over-ssh-v1');

      // After it: nowhere on the host, in no answer, operation log or line of the service's log.
      // (The search finds what is there: the public key in the git account's authorized_keys.)
      expect(await filesHolding(publicKey)).toEqual([`git 600 ${GIT_HOME}/.ssh/authorized_keys`]);
      expect(await filesHolding(privateKey)).toEqual([]);
      expect(log).toContain(`cloned git@${host.address}:acme/app.git`);
      // The service's log is read: it has the failed deploy's line from before.
      expect(serviceLog.join('')).toContain("refused the site's deploy key");
      expectNoLeak(privateKey, log, 'the operation');
      expectNoLeak(privateKey, answers.join('\n'), 'the API answers');
      expectNoLeak(privateKey, serviceLog.join(''), "Siteplane's log");
      // The mirror's configuration names the remote, nothing else.
      const config = await mustRun('cat', [`/home/${user}/${plainSite.domain}/repo/config`]);
      expect(config.stdout).toContain(`url = git@${host.address}:acme/app.git`);
      expect(config.stdout).not.toMatch(/sshCommand|IdentityFile/);
      // The host key was accepted on the first fetch into the site user's own known_hosts.
      const known = await run('ssh-keygen', ['-F', host.address, '-f', `/home/${user}/.ssh/known_hosts`]);
      expect(known.code).toBe(0);
      const kh = await mustRun('stat', ['-c', '%U %a', `/home/${user}/.ssh/known_hosts`]);
      expect(kh.stdout.trim()).toMatch(new RegExp(`^${user} [0-7]{3}$`));
    }, 900_000);

    it('refuses a git server whose host key changed since the first fetch', async () => {
      const file = `/home/${user}/.ssh/known_hosts`;
      const before = (await mustRun('cat', [file])).stdout;
      // What a man in the middle presents: another key for the same address.
      const other = generateSshKeyPair('impostor').public.split(/\s+/).slice(0, 2).join(' ');
      await asSiteUser('printf "%s\\n" "$1" > "$2"', [`${host.address} ${other}`, file]);
      try {
        const { deployment } = await deploy(plainSite);
        expect(deployment.status).toBe('failed');
        expect(deployment.operationView.error.message).toMatch(/ssh host key is not the one the site's user accepted/);
      } finally {
        await asSiteUser('cat > "$1"', [file], before);
      }
      // The site still serves what it served.
      const page = await curlUntil(plainSite.domain, '/', (a) => a.status === 200, 10_000);
      expect(page.body.trim()).toBe('over-ssh-v1');
    }, 900_000);

    it('unbinding forgets the key: no row holds it, no file on the host', async () => {
      const privateKey = await privateKeyOf(plainSite);
      await must(204, api('DELETE', `/api/v1/sites/${plainSite.uuid}/source`), 'DELETE source');
      await must(404, api('GET', `/api/v1/sites/${plainSite.uuid}/source`), 'GET source');
      const rows = await h.service.storage.db
        .selectFrom('site_sources')
        .selectAll()
        .where('site_uuid', '=', plainSite.uuid)
        .execute();
      expect(rows).toEqual([]);
      expect(await filesHolding(privateKey)).toEqual([]);
      const left = await run('sh', ['-c', 'ls -a "$1"', 'sh', `/home/${user}`]);
      expect(left.stdout).not.toMatch(/\.siteplane-deploy-/);
    }, 120_000);
  });

  describe('(b) each hosted provider (its stand-in) whose ssh clone address is the git server', () => {
    it.each(HOSTED_CASES)(
      '$provider: registers the key through the API, fetches over ssh with it, and removes it at unbind',
      async (c) => {
        // Not nested for GitLab either: the ssh address is then git@127.0.0.1:acme/monorepo.git for all four.
        const fixture: DeployKeyFixture = makeFixture();
        const standin = await c.start(fixture);
        try {
          const content = `hosted-over-ssh-${c.provider}`;
          await commit('acme/monorepo', { 'index.html': content }, `hosted v1 from ${c.provider}`);
          const profile = await must(
            201,
            api('POST', '/api/v1/vc-profiles', {
              provider: c.provider,
              name: `${c.provider}-${id}`,
              token: fixture.token,
              baseUrl: standin.baseUrl,
            }),
            `POST ${c.provider} profile`,
          );
          const source = await must(
            200,
            api('PUT', `/api/v1/sites/${hostedSite.uuid}/source`, {
              vcProfile: profile.uuid,
              repository: 'acme/monorepo',
              branch: 'trunk',
              access: 'deploy_key',
            }),
            'PUT source',
          );
          expect(source).toMatchObject({ auth: 'deploy_key', deploy_key_registration: { status: 'registered', reason: null } });
          const registered = (fixture.deployKeys ?? []).filter((k) => k.repository === 'acme/monorepo');
          expect(registered).toEqual([expect.objectContaining({ provider: c.provider, key: source.deploy_public_key })]);
          // The provider's sshd admits the keys registered through its API: the git account does the same.
          await admitKey(registered[0]?.key ?? '');

          // A key file a killed fetch left two hours ago (a trap does not run on SIGKILL or a reboot).
          const stale = `/home/${user}/.siteplane-deploy-left-by-a-killed-fetch.key`;
          await asSiteUser('umask 077 && echo x > "$1" && touch -d "2 hours ago" "$1"', [stale]);
          const { deployment, log } = await deploy(hostedSite);
          if (deployment.status !== 'succeeded') throw new Error(describeOperation(deployment.operationView));
          expect((await run('test', ['-e', stale])).code).toBe(1);
          expect(log).toContain('git@127.0.0.1:acme/monorepo.git');
          const page = await curlUntil(hostedSite.domain, '/', (a) => a.status === 200 && a.body.trim() === content, 10_000);
          expect(page.body.trim()).toBe(content);
          const privateKey = await privateKeyOf(hostedSite);
          expect(await filesHolding(privateKey)).toEqual([]);
          expectNoLeak(privateKey, log, 'the operation');
          expectNoLeak(privateKey, answers.join('\n'), 'the API answers');
          expectNoLeak(privateKey, serviceLog.join(''), "Siteplane's log");
          expectNoLeak(privateKey, JSON.stringify(standin.server.requests), 'the requests to the provider');
          // The token never reached the host either.
          const tokenFiles = await run('sh', [
            '-c',
            'grep -rlF -- "$1" /home /tmp /var/tmp /root /var/log /etc /srv 2>/dev/null',
            'sh',
            fixture.token,
          ]);
          expect(tokenFiles.stdout.trim()).toBe('');

          await must(204, api('DELETE', `/api/v1/sites/${hostedSite.uuid}/source`), 'DELETE source');
          expect((fixture.deployKeys ?? []).filter((k) => k.repository === 'acme/monorepo')).toEqual([]);
          const removals = await must(200, api('GET', `/api/v1/sites/${hostedSite.uuid}/source/deploy-key-removals`), 'removals');
          // Oldest first: this provider's is the last, and every earlier one was removed too.
          expect(removals.data.at(-1)).toEqual(expect.objectContaining({ cause: 'unbound', outcome: 'removed' }));
          expect(removals.data.map((r: JsonBody) => r.outcome)).not.toContain('failed');
        } finally {
          await standin.server.close();
        }
      },
      900_000,
    );
  });
});
