import { formatValue, header, LABEL_NAME, labelSet, METRIC_NAME } from './exposition.js';

/**
 * A small Prometheus registry (prom-client is not a dependency): counters, gauges and histograms
 * with labels, rendered in the text format. Updates are a map lookup and a few additions, so the
 * request hook stays cheap; values read from the database are filled in by collectors at scrape time.
 */
export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();
  private readonly collectors: Array<() => Promise<void> | void> = [];

  counter<L extends string>(name: string, help: string, labels: readonly L[] = []): Counter<L> {
    return this.add(new Counter<L>(name, help, labels));
  }

  gauge<L extends string>(name: string, help: string, labels: readonly L[] = []): Gauge<L> {
    return this.add(new Gauge<L>(name, help, labels));
  }

  histogram<L extends string>(name: string, help: string, labels: readonly L[], buckets: readonly number[]): Histogram<L> {
    return this.add(new Histogram<L>(name, help, labels, buckets));
  }

  /** Runs before every render (gauges read from the database at scrape time). */
  collect(collector: () => Promise<void> | void): void {
    this.collectors.push(collector);
  }

  async render(): Promise<string> {
    for (const collect of this.collectors) await collect();
    let out = '';
    for (const metric of this.metrics.values()) out += metric.render();
    return out;
  }

  private add<M extends Metric>(metric: M): M {
    if (this.metrics.has(metric.name)) throw new Error(`metric ${metric.name} is registered twice`);
    this.metrics.set(metric.name, metric);
    return metric;
  }
}

type Labels<L extends string> = Partial<Record<L, string>>;

abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${name}`);
    for (const label of labelNames)
      if (!LABEL_NAME.test(label) || label.startsWith('__') || label === 'le')
        throw new Error(`invalid label name ${label} of ${name}`);
  }

  abstract render(): string;

  protected valuesOf(labels: Labels<string>): string[] {
    return this.labelNames.map((n) => labels[n] ?? '');
  }
}

/** Children by their label values joined with a separator no value of ours contains unescaped. */
const keyOf = (values: readonly string[]) => values.join('\u0000');

class ValueMetric<L extends string> extends Metric {
  protected readonly values = new Map<string, { labels: string[]; value: number }>();

  protected cell(labels: Labels<L>): { labels: string[]; value: number } {
    const values = this.valuesOf(labels);
    const key = keyOf(values);
    let cell = this.values.get(key);
    if (!cell) {
      cell = { labels: values, value: 0 };
      this.values.set(key, cell);
    }
    return cell;
  }

  render(): string {
    let out = header(this.name, this.help, this instanceof Counter ? 'counter' : 'gauge');
    // A metric without labels shows 0 before its first update, so a scrape always names it.
    if (this.labelNames.length === 0 && this.values.size === 0) out += `${this.name} 0\n`;
    for (const { labels, value } of this.values.values())
      out += `${this.name}${labelSet(this.labelNames, labels)} ${formatValue(value)}\n`;
    return out;
  }
}

export class Counter<L extends string> extends ValueMetric<L> {
  inc(labels: Labels<L> = {}, by = 1): void {
    if (by < 0) throw new Error(`counter ${this.name} cannot decrease`);
    this.cell(labels).value += by;
  }
}

export class Gauge<L extends string> extends ValueMetric<L> {
  set(labels: Labels<L>, value: number): void {
    this.cell(labels).value = value;
  }

  /** Forgets every labelled value (a collector that sets the current ones afresh). */
  reset(): void {
    this.values.clear();
  }
}

interface HistogramCell {
  labels: string[];
  /** Per bucket, not cumulative (cumulated when rendered); the last is +Inf. */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram<L extends string> extends Metric {
  private readonly cells = new Map<string, HistogramCell>();
  readonly buckets: readonly number[];

  constructor(name: string, help: string, labelNames: readonly L[], buckets: readonly number[]) {
    super(name, help, labelNames);
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  /** The cell of these label values, to keep and observe into without a lookup each time. */
  child(labels: Labels<L>): HistogramChild {
    const values = this.valuesOf(labels);
    const key = keyOf(values);
    let cell = this.cells.get(key);
    if (!cell) {
      cell = { labels: values, counts: new Array(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.cells.set(key, cell);
    }
    return new HistogramChild(this.buckets, cell);
  }

  observe(labels: Labels<L>, value: number): void {
    this.child(labels).observe(value);
  }

  render(): string {
    let out = header(this.name, this.help, 'histogram');
    for (const cell of this.cells.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += cell.counts[i] ?? 0;
        const le = i < this.buckets.length ? formatValue(this.buckets[i] as number) : '+Inf';
        out += `${this.name}_bucket${labelSet(this.labelNames, cell.labels, ['le', le])} ${cumulative}\n`;
      }
      const set = labelSet(this.labelNames, cell.labels);
      out += `${this.name}_sum${set} ${formatValue(cell.sum)}\n${this.name}_count${set} ${cell.count}\n`;
    }
    return out;
  }
}

export class HistogramChild {
  constructor(
    private readonly buckets: readonly number[],
    private readonly cell: HistogramCell,
  ) {}

  observe(value: number): void {
    const { buckets, cell } = this;
    let i = 0;
    while (i < buckets.length && value > (buckets[i] as number)) i++;
    (cell.counts as number[])[i] = (cell.counts[i] ?? 0) + 1;
    cell.sum += value;
    cell.count++;
  }
}
