import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBE_SCRIPT } from '../../../src/provisioning/steps/probe.js';
import { mysqlDatabaseExists, mysqlUserHosts } from './support/databases.js';
import { ExecutorProbe, Harness, type RecordedRun, removeSystemUser, runId } from './support/harness.js';
import { curlUntil, livePid, mustRun, NGINX_PID_FILE, pathKind, run } from './support/host.js';

/**
 * Issue 3 item 9 "two creates on one server never run apt at once" and item 7 "failures mark the
 * operation failed with the step, exit code and redacted output; the site shows why".
 */
const id = runId();
const user = `spl${id}`;
const PACKAGE_TOOLS = new Set(['apt-get', 'apt-cache', 'apt', 'dpkg', 'dpkg-query']);

describe('package installs hold a per-server lock; failures are reported (issue 3 items 7, 9)', () => {
  let h: Harness;
  const probe = new ExecutorProbe();
  beforeAll(async () => {
    h = await Harness.start({ username: user, probe });
    await h.registerServer();
  });
  afterAll(async () => {
    await h?.stop();
    await removeSystemUser(user, id);
  });

  it('two PHP sites created at once never run apt/dpkg at the same time', async () => {
    // Every package command takes 400 ms longer: without the lock, the two jobs' package checks
    // (PHP, database engine) would overlap. (nginx's is a read in its step's probe, outside the
    // lock: dpkg says "ii" only once an install finished, and anything else is checked again
    // under the lock.)
    probe.hook = async (argv, phase) => {
      if (phase === 'before' && PACKAGE_TOOLS.has(argv[0] ?? '')) await new Promise((r) => setTimeout(r, 400));
    };
    const first = probe.runs.length;
    const sites = await Promise.all([
      h.createSite('php', `lock-a-${id}.siteplane.test`),
      h.createSite('laravel', `lock-b-${id}.siteplane.test`),
    ]);
    for (const site of sites) await h.waitInstalled(site, 90_000);
    probe.hook = null;

    const packageRuns = probe.runs.slice(first).filter((r) => PACKAGE_TOOLS.has(r.argv[0] ?? ''));
    const byJob = new Map<number, RecordedRun[]>();
    for (const r of packageRuns) byJob.set(r.exec, [...(byJob.get(r.exec) ?? []), r]);
    expect(byJob.size).toBe(2);
    for (const runs of byJob.values()) expect(runs.length).toBeGreaterThanOrEqual(1);
    // The two jobs did run side by side…
    const [a, b] = [...byJob.values()] as [RecordedRun[], RecordedRun[]];
    const span = (runs: RecordedRun[]) => [Math.min(...runs.map((r) => r.start)), Math.max(...runs.map((r) => r.end))];
    const [aStart, aEnd] = span(probe.runs.filter((r) => r.exec === a[0]!.exec)) as [number, number];
    const [bStart, bEnd] = span(probe.runs.filter((r) => r.exec === b[0]!.exec)) as [number, number];
    expect(aStart < bEnd && bStart < aEnd).toBe(true);
    // …but no package command of one overlapped one of the other.
    const overlaps = a.flatMap((x) => b.filter((y) => x.start < y.end && y.start < x.end).map((y) => [x.argv, y.argv]));
    expect(overlaps).toEqual([]);

    for (const site of sites) {
      const del = await h.deleteSite(site.uuid, true);
      await h.waitGone(site, del.operation.uuid);
    }
  }, 120_000);

  it('a step that fails marks the operation and site failed with the step, exit code and redacted output', async () => {
    const secret = `Leak${id}Secret`;
    const domain = `broken-${id}.siteplane.test`;
    const broken = `/etc/nginx/conf.d/zz-siteplane-test-${id}.conf`;
    // An operator's broken file appears just before the vhost step (so other sites keep working
    // until then); its unknown directive — the site's database password — is what nginx -t prints.
    probe.hook = async (argv, phase) => {
      // The vhost step's first command: its probe (steps/probe.ts) of the vhost.
      if (phase === 'before' && argv[2] === PROBE_SCRIPT && argv.includes(`/etc/nginx/sites-available/${domain}.conf`)) {
        await mustRun('tee', [broken], { input: `${secret} on;\n` });
      }
    };
    try {
      const site = await h.createSite('php', domain, {
        shouldCreateDatabaseAndUser: true,
        database: `broken_${id}`,
        databaseUser: `broken_${id}`,
        databasePassword: secret,
      });
      const failed = await h.waitFor(site.uuid, ['installed', 'failed'], 60_000);
      expect(failed.status).toBe('failed');
      const failure = {
        operation: site.operation.uuid,
        step: 'ensure nginx vhost',
        exit_code: 1,
        message: expect.stringContaining('unknown directive "***"'),
      };
      expect(failed.failure).toMatchObject(failure);

      const op = await h.operation(site.operation.uuid);
      expect(op.status).toBe('failed');
      expect(op.error).toMatchObject(failure);
      const vhostStep = op.steps.find((s) => s.name === 'ensure nginx vhost');
      expect(vhostStep).toMatchObject({ status: 'failed', exit_code: 1 });
      expect(op.steps.filter((s) => s.status === 'succeeded').map((s) => s.name)).toContain('ensure PHP-FPM pool');
      const lines = op.logs.map((l) => l.line);
      expect(lines).toContain(`step ensure nginx vhost failed: ${op.error?.message}`);
      expect(lines.some((l) => l.startsWith('  | ') && l.includes('unknown directive "***"'))).toBe(true);
      // Nowhere in what the API shows, nor in the job's stored error.
      const shown = JSON.stringify([failed, op]);
      expect(shown).not.toContain(secret);
      // The worker marks the job failed just after the operation.
      const jobError = async () =>
        (await h.service.storage.db.selectFrom('jobs').select('last_error').where('site_uuid', '=', site.uuid).executeTakeFirst())
          ?.last_error ?? null;
      for (let i = 0; i < 100 && (await jobError()) === null; i++) await new Promise((r) => setTimeout(r, 20));
      const lastError = await jobError();
      expect(lastError).toContain('unknown directive "***"');
      expect(lastError).not.toContain(secret);

      // The failed vhost was taken back out; nginx still runs the previous configuration.
      expect(pathKind(`/etc/nginx/sites-available/${domain}.conf`)).toBeNull();
      expect(pathKind(`/etc/nginx/sites-enabled/${domain}.conf`)).toBeNull();
      expect(await livePid(NGINX_PID_FILE)).not.toBeNull();

      // Fixed by the operator, the failed site is deleted cleanly, its database too.
      await run('rm', ['-f', '--', broken]);
      expect((await run('nginx', ['-t', '-q'])).code).toBe(0);
      const del = await h.deleteSite(site.uuid, true);
      await h.waitGone(site, del.operation.uuid);
      expect(pathKind(`/home/${user}/${domain}`)).toBeNull();
      expect(await mysqlDatabaseExists(`broken_${id}`)).toBe(false);
      expect(await mysqlUserHosts(`broken_${id}`)).toEqual([]);
    } finally {
      probe.hook = null;
      await run('rm', ['-f', '--', broken]);
    }
  }, 90_000);

  it('a failed site leaves other sites serving', async () => {
    const site = await h.createSite('static-html', `after-${id}.siteplane.test`);
    await h.waitInstalled(site);
    const page = await curlUntil(`after-${id}.siteplane.test`, '/', (r) => r.body.includes('is ready'));
    expect(page.body).toContain(`after-${id}.siteplane.test is ready`);
    const del = await h.deleteSite(site.uuid);
    await h.waitGone(site, del.operation.uuid);
  });
});
