/**
 * A strict reader of the Prometheus text format (0.0.4) for tests: every line must be a HELP, a
 * TYPE or a sample of a declared metric, label values properly escaped; histograms must have
 * cumulative buckets ending in +Inf equal to their _count.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\[\\"n])*)"(,|$)/y;

export function parsePrometheusText(text: string): { samples: Sample[]; types: Map<string, string> } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.startsWith('# HELP ')) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      if (types.has(type[1] as string)) throw new Error(`TYPE twice for ${type[1]}`);
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const l = LABEL.exec(body);
      if (!l) throw new Error(`bad labels in ${JSON.stringify(line)}`);
      labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
    const raw = m[3] as string;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (Number.isNaN(value) && raw !== 'NaN') throw new Error(`bad value in ${JSON.stringify(line)}`);
    const name = m[1] as string;
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    if (!types.has(family)) throw new Error(`sample of an undeclared metric: ${line}`);
    samples.push({ name, labels, value });
  }
  for (const [family, type] of types) if (type === 'histogram') checkHistogram(family, samples);
  return { samples, types };
}

function checkHistogram(family: string, samples: Sample[]): void {
  const series = new Map<string, Sample[]>();
  for (const s of samples.filter((x) => x.name === `${family}_bucket`)) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(rest);
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, buckets] of series) {
    let last = -1;
    let lastLe = -Infinity;
    for (const b of buckets) {
      const le = b.labels.le === '+Inf' ? Infinity : Number(b.labels.le);
      if (!(le > lastLe) || b.value < last) throw new Error(`${family}${key}: buckets not cumulative/ascending`);
      lastLe = le;
      last = b.value;
    }
    if (lastLe !== Infinity) throw new Error(`${family}${key}: no +Inf bucket`);
    const count = samples.find((s) => s.name === `${family}_count` && JSON.stringify(s.labels) === key);
    if (count?.value !== last) throw new Error(`${family}${key}: _count differs from the +Inf bucket`);
  }
}

/** The value of one sample whose labels include `labels`; undefined when there is none. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}
