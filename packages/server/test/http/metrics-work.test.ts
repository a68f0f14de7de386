/**
 * The metrics the work updates (README "Operating: metrics and health"): job and step durations
 * when sites install, deployments by outcome, on a service whose deploy steps are the recording
 * stand-in (support/recording-deploy-steps.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { TEST_DB } from '../support/test-service.js';
import { call, type DeployWorld, expectStatus, installedSite, startDeployWorld, waitForDeployment } from './deploy-api.js';

const METRICS_TOKEN = 'metrics-token-work-0123456789';

describe(`metrics of jobs, steps and deployments on ${TEST_DB}`, () => {
  let w: DeployWorld;
  beforeAll(async () => {
    w = await startDeployWorld({ env: { SITEPLANE_METRICS_TOKEN: METRICS_TOKEN } });
  }, 60_000);
  afterAll(async () => w?.stop());

  const scrape = async () => {
    const res = await w.s.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    return parsePrometheusText(res.body).samples;
  };

  it('a site install adds a site.create job run and its steps, labelled without versions', async () => {
    const before = sampleValue(await scrape(), 'siteplane_job_duration_seconds_count', { kind: 'site.create', outcome: 'done' });
    expect(before).toBeUndefined();
    await installedSite(w, 'laravel', 'metrics.example.com', { phpVersion: '8.2' });
    const samples = await scrape();
    expect(sampleValue(samples, 'siteplane_job_duration_seconds_count', { kind: 'site.create', outcome: 'done' })).toBe(1);
    const steps = samples.filter((s) => s.name === 'siteplane_step_duration_seconds_count' && s.labels.operation === 'create');
    expect(steps.map((s) => s.labels.step).sort()).toEqual(['ensure nginx vhost', 'ensure site directory']);
    for (const s of steps) {
      expect(s.labels.outcome).toBe('succeeded');
      expect(s.labels.step).not.toMatch(/\d/);
    }
  });

  it('deployments are counted by kind and outcome', async () => {
    const site = await installedSite(w, 'laravel', 'deploys.example.com', { phpVersion: '8.2' });
    await expectStatus(
      call(w.s, 'PUT', `/api/v1/sites/${site}/source`, {
        payload: { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' },
      }),
      200,
    );
    const ok = (await expectStatus(call(w.s, 'POST', `/api/v1/sites/${site}/deployments`, { payload: {} }), 202)).json();
    expect((await waitForDeployment(w, ok.uuid, ['succeeded', 'failed'])).status).toBe('succeeded');
    w.steps.failAt.add('fetch');
    const bad = (await expectStatus(call(w.s, 'POST', `/api/v1/sites/${site}/deployments`, { payload: {} }), 202)).json();
    expect((await waitForDeployment(w, bad.uuid, ['succeeded', 'failed'])).status).toBe('failed');
    w.steps.failAt.clear();
    const samples = await scrape();
    expect(sampleValue(samples, 'siteplane_deployments_total', { kind: 'deploy', outcome: 'succeeded' })).toBe(1);
    expect(sampleValue(samples, 'siteplane_deployments_total', { kind: 'deploy', outcome: 'failed' })).toBe(1);
    expect(
      sampleValue(samples, 'siteplane_step_duration_seconds_count', { operation: 'deploy', step: 'fetch', outcome: 'failed' }),
    ).toBe(1);
  });
});
