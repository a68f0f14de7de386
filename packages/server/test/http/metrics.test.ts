import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/app/config.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const DAY = 86_400_000;

/** A clock the test moves (the worker, the queue gauges and the health check all read it). */
function movableClock() {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms: number) => (offset += ms) };
}

describe(`GET /metrics on ${TEST_DB} (Prometheus text format; README "Operating: metrics and health")`, () => {
  let s: TestService;
  const clock = movableClock();
  beforeAll(async () => {
    // Worker off: the jobs created here stay queued, so the queue gauges have something to count.
    s = await startTestService({ clock, env: { SITEPLANE_METRICS_TOKEN: METRICS_TOKEN, SITEPLANE_WORKER: 'off' } });
  });
  afterAll(async () => s?.stop());

  const scrape = async () => {
    const res = await s.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    return { text: res.body, ...parsePrometheusText(res.body) };
  };

  it('needs SITEPLANE_METRICS_TOKEN: 401 with WWW-Authenticate without it or with another token (an API token too)', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Bearer ${s.token}`, METRICS_TOKEN]) {
      const res = await s.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
      expect(res.body).not.toContain('siteplane_');
    }
  });

  it('parses as the text format and declares every metric of the README', async () => {
    const { types, samples } = await scrape();
    expect(Object.fromEntries(types)).toMatchObject({
      siteplane_http_request_duration_seconds: 'histogram',
      siteplane_job_duration_seconds: 'histogram',
      siteplane_step_duration_seconds: 'histogram',
      siteplane_deployments_total: 'counter',
      siteplane_acme_orders_total: 'counter',
      siteplane_jobs: 'gauge',
      siteplane_job_queue_oldest_due_age_seconds: 'gauge',
      siteplane_certificates: 'gauge',
      siteplane_ssh_connections_open: 'gauge',
      siteplane_database_up: 'gauge',
    });
    expect(sampleValue(samples, 'siteplane_database_up')).toBe(1);
    expect(sampleValue(samples, 'siteplane_ssh_connections_open')).toBe(0);
  });

  it('request latency: counted per route pattern, method and status class, never the raw URL', async () => {
    const labels = { route: '/api/v1/sites/:site', method: 'GET', status: '4xx' };
    const before = sampleValue((await scrape()).samples, 'siteplane_http_request_duration_seconds_count', labels) ?? 0;
    const uuids = [randomUUID(), randomUUID(), randomUUID()];
    for (const uuid of uuids) {
      const res = await s.app.inject({
        method: 'GET',
        url: `/api/v1/sites/${uuid}`,
        headers: { authorization: `Bearer ${s.token}` },
      });
      expect(res.statusCode).toBe(404);
    }
    await s.app.inject({ method: 'GET', url: '/api/v1/servers', headers: { authorization: `Bearer ${s.token}` } });
    const { samples, text } = await scrape();
    expect(sampleValue(samples, 'siteplane_http_request_duration_seconds_count', labels)).toBe(before + 3);
    expect(
      sampleValue(samples, 'siteplane_http_request_duration_seconds_count', { route: '/api/v1/servers', status: '2xx' }),
    ).toBeGreaterThanOrEqual(1);
    for (const uuid of uuids) expect(text).not.toContain(uuid);
    // A URL no route matches is one label value, whatever the URL.
    await s.app.inject({ method: 'GET', url: `/no/such/${randomUUID()}` });
    expect(sampleValue((await scrape()).samples, 'siteplane_http_request_duration_seconds_count', { route: 'unmatched' })).toBe(
      1,
    );
  });

  it('queue depth and the oldest due job age come from the database at scrape time', async () => {
    const ids = await seedServer(s);
    for (const domain of ['q1.example.com', 'q2.example.com']) {
      const res = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { authorization: `Bearer ${s.token}` },
        payload: { ...ids, type: 'static-html', domain, ssl: false, options: {} },
      });
      expect(res.statusCode).toBe(202);
    }
    clock.advance(90_000);
    const { samples } = await scrape();
    expect(sampleValue(samples, 'siteplane_jobs', { kind: 'site.create', status: 'queued' })).toBe(2);
    const age = sampleValue(samples, 'siteplane_job_queue_oldest_due_age_seconds') as number;
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(600);
  });

  it('certificates are counted by days to expiry; a row without material (never issued) is not', async () => {
    const now = clock.now().getTime();
    const row = (days: number | null, material: string | null) => ({
      uuid: randomUUID(),
      scope: `site:${randomUUID()}`,
      owner: 'siteplane',
      directory_url: 'https://acme.test/directory',
      domains: '["a.example.com"]',
      material_enc: material,
      serial: material ? 'ab' : null,
      not_before: null,
      expires_at: days === null ? null : new Date(now + days * DAY).toISOString(),
      lock_until: null,
      locked_by: null,
      next_attempt_at: null,
      last_error: null,
      created_at: new Date(now).toISOString(),
      updated_at: new Date(now).toISOString(),
      deferred_until: null,
    });
    await s.storage.db
      .insertInto('certificates')
      .values([
        row(-1, 'sealed'),
        row(3, 'sealed'),
        row(10, 'sealed'),
        row(10, 'sealed'),
        row(20, 'sealed'),
        row(80, 'sealed'),
        row(null, null),
      ])
      .execute();
    const { samples } = await scrape();
    const band = (days_to_expiry: string) => sampleValue(samples, 'siteplane_certificates', { days_to_expiry });
    expect([band('expired'), band('0-7'), band('7-14'), band('14-30'), band('30+')]).toEqual([1, 1, 2, 1, 1]);
  });
});

describe(`/metrics settings on ${TEST_DB}`, () => {
  it('neither SITEPLANE_METRICS_TOKEN nor SITEPLANE_METRICS_ADDRESS: /metrics answers 404', async () => {
    const s = await startTestService();
    try {
      const res = await s.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.statusCode).toBe(404);
      expect(await s.listenMetrics()).toBeNull();
    } finally {
      await s.stop();
    }
  });

  it('SITEPLANE_METRICS_ADDRESS: a listener of its own serves only /metrics (with the token when set); the API answers 404', async () => {
    const s = await startTestService({
      env: { SITEPLANE_METRICS_ADDRESS: '127.0.0.1:0', SITEPLANE_METRICS_TOKEN: METRICS_TOKEN },
    });
    try {
      const api = await s.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(api.statusCode).toBe(404);
      const address = await s.listenMetrics();
      expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${address}/metrics`)).status).toBe(401);
      expect((await fetch(`${address}/api/v1/health`)).status).toBe(404);
      await s.app.inject({ method: 'GET', url: '/api/v1/servers', headers: { authorization: `Bearer ${s.token}` } });
      const res = await fetch(`${address}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status).toBe(200);
      const { samples } = parsePrometheusText(await res.text());
      // Latencies of the API's listener are recorded though /metrics is served elsewhere.
      expect(sampleValue(samples, 'siteplane_http_request_duration_seconds_count', { route: '/api/v1/servers' })).toBe(1);
    } finally {
      await s.stop();
    }
  });

  it('bad values are configuration problems', () => {
    const load = (env: Record<string, string>) => () => loadConfig({ SITEPLANE_DATA_DIR: '/tmp/x', ...env });
    expect(load({ SITEPLANE_METRICS_TOKEN: 'short' })).toThrow(ConfigError);
    expect(load({ SITEPLANE_METRICS_ADDRESS: '9464' })).toThrow(/SITEPLANE_METRICS_ADDRESS/);
    expect(load({ SITEPLANE_METRICS_ADDRESS: '127.0.0.1:99999' })).toThrow(/SITEPLANE_METRICS_ADDRESS/);
    expect(loadConfig({ SITEPLANE_DATA_DIR: '/tmp/x', SITEPLANE_METRICS_ADDRESS: '[::1]:9464' }).metrics.address).toEqual({
      host: '::1',
      port: 9464,
    });
  });
});
