import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorProbe, Harness, type JsonBody, removeSystemUser, runId } from './support/harness.js';
import { curlUntil } from './support/host.js';

/**
 * Time from POST /api/v1/sites to `installed` for static-html and php sites on a server that has
 * what they need (nginx, PHP 8.2: the warm-up site of each type brings it), median of 10, and the
 * SSH round trips per site (commands the executor ran: each one exec channel on the job's one
 * connection), with the time spent in them. Targets: static-html ≤ 1 s, php ≤ 1.5 s (they were
 * 3 s and 5 s), printed against each median but not asserted (timings belong to benchmarks; a
 * loaded CI machine is no measure). The server is the test host (SITEPLANE_TEST_HOST); the
 * figures are printed and written to .test-output/.
 */
const id = runId();
const user = `spb${id}`;
const RUNS = 10;
const repoRoot = join(import.meta.dirname, '../../../../..');

interface Sample {
  ms: number;
  roundTrips: number;
  /** Time the job's commands took, from sending each to its answer (they run one after another). */
  commandMs: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

describe('time to installed and SSH round trips per site', () => {
  let h: Harness;
  const probe = new ExecutorProbe();
  const results: Record<string, { create: Sample[]; remove: Sample[] }> = {};

  beforeAll(async () => {
    h = await Harness.start({ username: user, probe });
    await h.registerServer();
  });
  afterAll(async () => {
    await h?.stop();
    await removeSystemUser(user, id);
  });

  /** POST → installed (polling every 10 ms), and the round trips of that job. */
  async function timeCreate(type: string, domain: string): Promise<{ sample: Sample; site: JsonBody }> {
    const execsBefore = probe.executors.length;
    const started = performance.now();
    const site = await h.createSite(type, domain);
    await h.waitFor(site.uuid, ['installed', 'failed'], 60_000, 10);
    const ms = performance.now() - started;
    await h.waitInstalled(site);
    const runs = probe.runs.filter((r) => r.exec >= execsBefore);
    const commandMs = runs.reduce((sum, r) => sum + r.end - r.start, 0);
    return { sample: { ms, roundTrips: runs.length, commandMs }, site };
  }

  async function timeDelete(site: JsonBody): Promise<Sample> {
    const execsBefore = probe.executors.length;
    const started = performance.now();
    const del = await h.deleteSite(site.uuid);
    await h.waitFor(site.uuid, ['gone', 'delete_failed'], 60_000, 10);
    const ms = performance.now() - started;
    await h.waitGone(site, del.operation.uuid);
    const runs = probe.runs.filter((r) => r.exec >= execsBefore);
    return { ms, roundTrips: runs.length, commandMs: runs.reduce((sum, r) => sum + r.end - r.start, 0) };
  }

  for (const [type, targetMs] of [
    ['static-html', 1_000],
    ['php', 1_500],
  ] as const) {
    it(`${type}: median of ${RUNS} creates measured against ${targetMs} ms (printed, not asserted)`, async () => {
      // Warm-up (not counted): the first site of the suite creates the system user, starts nginx / php-fpm.
      const warm = await timeCreate(type, `warm-${type}-${id}.siteplane.test`);
      await timeDelete(warm.site);
      const create: Sample[] = [];
      const sites: JsonBody[] = [];
      for (let i = 0; i < RUNS; i++) {
        const domain = `t${i}-${type}-${id}.siteplane.test`;
        const { sample, site } = await timeCreate(type, domain);
        create.push(sample);
        sites.push(site);
      }
      // Installed means served (nginx reloaded with the vhost): check the last one answers.
      const last = `t${RUNS - 1}-${type}-${id}.siteplane.test`;
      expect((await curlUntil(last, '/', (r) => r.body.includes('is ready'))).body).toContain(`${last} is ready`);
      const remove: Sample[] = [];
      for (const site of sites) remove.push(await timeDelete(site));
      results[type] = { create, remove };

      const createMedian = median(create.map((s) => s.ms));
      console.info(
        `${type}: POST→installed median ${Math.round(createMedian)} ms (min ${Math.round(Math.min(...create.map((s) => s.ms)))}, max ${Math.round(Math.max(...create.map((s) => s.ms)))}), ` +
          `${median(create.map((s) => s.roundTrips))} round trips taking ${Math.round(median(create.map((s) => s.commandMs)))} ms; delete median ${Math.round(median(remove.map((s) => s.ms)))} ms, ` +
          `${median(remove.map((s) => s.roundTrips))} round trips; warm-up ${Math.round(warm.sample.ms)} ms; ` +
          `target ${targetMs} ms ${createMedian <= targetMs ? 'met' : 'NOT met'} (load ${execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim()})`,
      );
      // Speed is a benchmark's business, not a test's (a loaded machine would fail it): the figure
      // is printed and written to .test-output/; what is asserted is what load cannot change.
      // Round trips are a property of the recipe, not of the machine's load; the first site of a
      // kind may do more (it creates the shared PHP-FPM pool the warm-up's deletion removed).
      expect(Math.max(...create.slice(1).map((s) => s.roundTrips))).toBe(Math.min(...create.slice(1).map((s) => s.roundTrips)));
    }, 180_000);
  }

  it('writes the figures with the machine they were measured on', () => {
    const cpu = cpus()[0]?.model ?? 'unknown';
    const report = {
      date: new Date().toISOString(),
      machine: {
        nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
        cpu,
        load: execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim(),
      },
      runs: RUNS,
      results: Object.fromEntries(
        Object.entries(results).map(([type, r]) => [
          type,
          {
            create_ms: r.create.map((s) => Math.round(s.ms)),
            create_median_ms: Math.round(median(r.create.map((s) => s.ms))),
            create_round_trips: median(r.create.map((s) => s.roundTrips)),
            create_command_ms_median: Math.round(median(r.create.map((s) => s.commandMs))),
            create_round_trips_min_max: [
              Math.min(...r.create.map((s) => s.roundTrips)),
              Math.max(...r.create.map((s) => s.roundTrips)),
            ],
            delete_ms: r.remove.map((s) => Math.round(s.ms)),
            delete_median_ms: Math.round(median(r.remove.map((s) => s.ms))),
            delete_round_trips: median(r.remove.map((s) => s.roundTrips)),
          },
        ]),
      ),
    };
    expect(Object.keys(report.results)).toEqual(['static-html', 'php']);
    mkdirSync(join(repoRoot, '.test-output'), { recursive: true });
    writeFileSync(join(repoRoot, '.test-output', 'sites-timings.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.info(JSON.stringify(report));
  });
});
