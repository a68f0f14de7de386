import { describe, expect, it } from 'vitest';
import { escapeLabelValue } from '../../src/metrics/exposition.js';
import { MetricsRegistry } from '../../src/metrics/registry.js';
import { stepLabel } from '../../src/metrics/service-metrics.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';

describe('the Prometheus text registry (exposition format 0.0.4)', () => {
  it('escapes backslash, double quote and newline in label values, and HELP text', async () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const r = new MetricsRegistry();
    r.counter('x_total', 'Help with \\ and\nnewline.', ['path']).inc({ path: 'C:\\dir "q"\nnext' }, 2);
    const text = await r.render();
    expect(text).toBe(
      '# HELP x_total Help with \\\\ and\\nnewline.\n# TYPE x_total counter\nx_total{path="C:\\\\dir \\"q\\"\\nnext"} 2\n',
    );
    const { samples } = parsePrometheusText(text);
    expect(samples[0]?.labels.path).toBe('C:\\dir "q"\nnext');
  });

  it('histograms: cumulative le buckets, +Inf, _sum and _count; a value on a bound falls in that bucket', async () => {
    const r = new MetricsRegistry();
    const h = r.histogram('d_seconds', 'Durations.', ['kind'], [0.5, 0.1, 1]);
    for (const v of [0.05, 0.1, 0.3, 0.5, 2]) h.observe({ kind: 'a' }, v);
    const text = await r.render();
    const { samples } = parsePrometheusText(text);
    const bucket = (le: string) => sampleValue(samples, 'd_seconds_bucket', { kind: 'a', le });
    expect([bucket('0.1'), bucket('0.5'), bucket('1'), bucket('+Inf')]).toEqual([2, 4, 4, 5]);
    expect(sampleValue(samples, 'd_seconds_count', { kind: 'a' })).toBe(5);
    expect(sampleValue(samples, 'd_seconds_sum', { kind: 'a' })).toBeCloseTo(2.95);
  });

  it('gauges are set and reset; a label-less metric shows 0 before its first update; collectors run at render', async () => {
    const r = new MetricsRegistry();
    const g = r.gauge('g', 'A gauge.', ['k']);
    r.gauge('plain', 'No labels.');
    let n = 0;
    r.collect(() => {
      g.reset();
      g.set({ k: `v${++n}` }, n);
    });
    const first = parsePrometheusText(await r.render()).samples;
    expect(sampleValue(first, 'plain')).toBe(0);
    expect(sampleValue(first, 'g', { k: 'v1' })).toBe(1);
    const second = parsePrometheusText(await r.render()).samples;
    expect(sampleValue(second, 'g', { k: 'v1' })).toBeUndefined();
    expect(sampleValue(second, 'g', { k: 'v2' })).toBe(2);
  });

  it('refuses invalid names, a reserved le label, a metric twice and a counter going down', () => {
    const r = new MetricsRegistry();
    expect(() => r.counter('bad-name', 'x')).toThrow(/invalid metric name/);
    expect(() => r.histogram('h', 'x', ['le'], [1])).toThrow(/invalid label name/);
    r.counter('c_total', 'x');
    expect(() => r.gauge('c_total', 'x')).toThrow(/twice/);
    const c = r.counter('d_total', 'x');
    expect(() => c.inc({}, -1)).toThrow(/cannot decrease/);
  });

  it('step labels drop versions and what follows a colon (user-named hooks), so the label set stays small', () => {
    expect(stepLabel('ensure PHP 8.2')).toBe('ensure PHP');
    expect(stepLabel('install Strapi 4.15.0 from npm')).toBe('install Strapi from npm');
    expect(stepLabel('hook: my "secret" build')).toBe('hook');
    expect(stepLabel('ensure nginx vhost')).toBe('ensure nginx vhost');
  });
});
