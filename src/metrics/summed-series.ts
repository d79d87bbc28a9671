import type { Metric, Registry } from 'prom-client';

/** prom-client itself: loaded when first scraped (gateway-metrics.ts). */
export type PromClient = typeof import('prom-client');

/**
 * Counters and histograms summed in plain maps on the request path and handed to prom-client's
 * registry only when scraped. prom-client checks every label name and builds a hash string on
 * each `inc` and `observe` (about 1.5 µs each with label objects made per call, a dozen per
 * request); here the caller names the series with a key it builds cheaply, and the labels are
 * made once per series. The text a scrape returns is prom-client's own, line for line.
 */

/** A counter: `add` on the request path, prom-client's Counter renders it once registered. */
export class SummedCounter<Label extends string> {
  private readonly series = new Map<string, { labels: Record<Label, string>; value: number }>();

  constructor(private readonly configuration: { name: string; help: string; labelNames: readonly Label[] }) {}

  /** Renders the sums in `registry` from now on (what was added before counts too). */
  registerIn(client: PromClient, registry: Registry): void {
    const series = this.series;
    const counter = new client.Counter<Label>({
      ...this.configuration,
      registers: [registry],
      collect() {
        reset();
        for (const entry of series.values()) this.inc(entry.labels, entry.value);
      },
    });
    const reset = counter.reset.bind(counter);
    // registry.resetMetrics() starts the sums over too.
    counter.reset = () => {
      series.clear();
      reset();
    };
  }

  /** Add `value` to the series `key` names (one key per label set); `labels` makes its labels the first time. */
  add(key: string, value: number, labels: () => Record<Label, string>): void {
    if (!(value >= 0)) throw new RangeError(`a counter only goes up, got ${value}`);
    const entry = this.series.get(key);
    if (entry) entry.value += value;
    else this.series.set(key, { labels: labels(), value });
  }
}

interface HistogramSeries<Label extends string> {
  labels: Record<Label, string>;
  /** Observations per bucket (not cumulative); past the last bound they count in `count` only. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** A histogram: `observe` on the request path; scraped as prom-client's Histogram would render it. */
export class SummedHistogram<Label extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly bounds: readonly number[];
  private series = new Map<string, HistogramSeries<Label>>();

  constructor(configuration: { name: string; help: string; labelNames: readonly Label[]; buckets: readonly number[] }) {
    this.name = configuration.name;
    this.help = configuration.help;
    this.bounds = [...configuration.buckets].sort((a, b) => a - b);
  }

  /** Renders the series in `registry` from now on. */
  registerIn(registry: Registry): void {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series `key` names, made empty (rendered with zero counts) if it is not there yet. */
  touch(key: string, labels: () => Record<Label, string>): HistogramSeries<Label> {
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: labels(), buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    return entry;
  }

  /** Count `value` in the series `key` names (one key per label set); `labels` makes its labels the first time. */
  observe(key: string, value: number, labels: () => Record<Label, string>): void {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
    const entry = this.touch(key, labels);
    const bounds = this.bounds;
    for (let index = 0; index < bounds.length; index++) {
      if (value <= bounds[index]!) {
        entry.buckets[index]! += 1;
        break;
      }
    }
    entry.sum += value;
    entry.count += 1;
  }

  reset(): void {
    this.series = new Map();
  }

  /** What prom-client's registry reads to render the text format: the shape of its Histogram's. */
  async getForPromString() {
    const bucketName = `${this.name}_bucket`;
    const values: HistogramValue[] = [];
    for (const entry of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += entry.buckets[index]!;
        values.push({ labels: { le: bound }, sharedLabels: entry.labels, value: cumulative, metricName: bucketName, exemplar: null });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: entry.labels, value: entry.count, metricName: bucketName, exemplar: null });
      values.push({ labels: {}, sharedLabels: entry.labels, value: entry.sum, metricName: `${this.name}_sum`, exemplar: undefined });
      values.push({ labels: {}, sharedLabels: entry.labels, value: entry.count, metricName: `${this.name}_count`, exemplar: undefined });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The JSON form (registry.getMetricsAsJSON): each value's labels whole, as prom-client gives them. */
  async get() {
    const data = await this.getForPromString();
    return { ...data, values: data.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })) };
  }
}

interface HistogramValue {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}
