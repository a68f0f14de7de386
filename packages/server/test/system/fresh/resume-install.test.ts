import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, sqliteFile } from '../../../src/app/config.js';
import { openStorage } from '../../../src/storage/database.js';
import { createToken } from '../../../src/storage/tokens.js';
import { httpApi, SitesClient } from '../sites/support/harness.js';
import { curlUntil, run, useHost } from '../sites/support/host.js';
import { killableServeEnv, serve } from '../sites/support/serve.js';
import { startTestHost, stopTestHost, type TestHost } from '../support/test-host.js';

/**
 * Issue 9 item 6: `siteplane serve` is killed with SIGKILL while the first site's packages are
 * being installed on a pristine host (its own: test-host.sh, index 2). The restarted service takes
 * the job over and finds the `apt-get install` it had started still running (or finished): it
 * waits for it and reads its result instead of starting it again. Every apt-get the host ran is
 * watched from the outside (its process table, every 100 ms): each install command ran once.
 */
const HOST = 'resume';
const user = `spk${randomBytes(3).toString('hex')}`;
const domain = `kill9-${user}.siteplane.test`;

interface AptRun {
  pid: string;
  ppid: string;
  command: string;
}

describe('kill -9 during the first site’s package installation on a pristine host (issue 9 item 6)', () => {
  let host: TestHost;
  const children: ChildProcess[] = [];
  let dataDir = '';
  const seen = new Map<string, AptRun>();
  let watching = true;
  let watcher: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    host = await startTestHost(HOST, { index: 2 });
    useHost(host);
    dataDir = mkdtempSync(join(tmpdir(), 'siteplane-kill9-apt-'));
  });

  afterAll(async () => {
    watching = false;
    await watcher;
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(dataDir, { recursive: true, force: true });
    await stopTestHost(HOST);
  });

  it(
    'the restarted service waits for the running apt-get instead of starting it again; the site is installed',
    async () => {
      const env = killableServeEnv(dataDir);
      const storage = await openStorage({
        databaseUrl: null,
        sqliteFile: sqliteFile(loadConfig({ SITEPLANE_DATA_DIR: dataDir })),
      });
      const token = (await createToken(storage.db, { name: 'kill9-apt', scope: 'write' })).token;
      await storage.close();

      watcher = watchAptRuns();
      const first = await serve(env, children);
      const api = new SitesClient(httpApi(first.base, token), user);
      await api.registerServer();
      const site = await api.createSite('php', domain, { shouldCreateDatabaseAndUser: true });

      // The first package installation on the bare host: nginx's.
      const until = Date.now() + 300_000;
      while (![...seen.values()].some((r) => r.command.includes(' install ')) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect([...seen.values()].some((r) => r.command.includes(' install '))).toBe(true);
      await new Promise((r) => setTimeout(r, 500));
      process.kill(first.child.pid!, 'SIGKILL');
      await new Promise((resolve) => first.child.once('exit', resolve));

      const second = await serve(env, children);
      const again = new SitesClient(httpApi(second.base, token), user);
      Object.assign(again, { server: api.server, serverUser: api.serverUser });
      const done = await again.waitInstalled(site, 15 * 60_000);
      expect(done.status).toBe('installed');
      watching = false;
      await watcher;

      // Each apt-get command line ran in one process: none was started a second time. (apt-get's own
      // forks, before they exec dpkg, carry its command line: only the runs whose parent is no apt-get count.)
      const byCommand = new Map<string, string[]>();
      for (const r of seen.values()) {
        if (seen.has(r.ppid)) continue;
        byCommand.set(r.command, [...(byCommand.get(r.command) ?? []), r.pid]);
      }
      const repeated = [...byCommand].filter(([, pids]) => pids.length > 1);
      expect(repeated).toEqual([]);
      // And dpkg unpacked each package once.
      const dpkgLog = (await run('cat', ['/var/log/dpkg.log'])).stdout;
      const installs = [...dpkgLog.matchAll(/ install (\S+) /g)].map((m) => m[1]!);
      expect(installs.length).toBeGreaterThan(10);
      expect(installs.filter((name, i) => installs.indexOf(name) !== i)).toEqual([]);

      expect((await curlUntil(domain, '/', (r) => r.body.includes('is ready'))).body).toContain(`${domain} is ready`);
      second.child.kill('SIGTERM');
      await new Promise((resolve) => second.child.once('exit', resolve));
    },
    20 * 60_000,
  );

  /** Records every apt-get process of the host (pid → its command line) until `watching` ends. */
  async function watchAptRuns(): Promise<void> {
    while (watching) {
      // pid, parent pid (4th field of stat, after the parenthesised name) and command line.
      const script =
        'for p in /proc/[0-9]*; do c=$(tr "\\0" " " <"$p/cmdline" 2>/dev/null) || continue; case "$c" in apt-get*) ' +
        'pp=$(sed "s/^.*) //" "$p/stat" | cut -d" " -f2); echo "$p $pp $c";; esac; done';
      const ps = await run('sh', ['-c', script]);
      for (const line of ps.stdout.split('\n')) {
        const match = /^\/proc\/(\d+) (\d+) (.*)$/.exec(line.trim());
        if (match && !seen.has(match[1]!)) seen.set(match[1]!, { pid: match[1]!, ppid: match[2]!, command: match[3]!.trim() });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});
