/**
 * `GET /metrics`: the fleet's counters, which every worker adds to one Redis
 * hash (src/metrics/recorder.ts), and the queue's depth per state, read on each
 * scrape; plus this process's default metrics. A registry of its own, so
 * nothing else in the process leaks into the page.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DURATION_BUCKETS } from '../metrics/recorder.js';

export const METRIC_NAMES = {
  finished: 'realty_deals_finished_total',
  calls: 'realty_gateway_calls_total',
  duration: 'realty_gateway_request_duration_seconds',
  queue: 'realty_queue_jobs',
} as const;

export interface EndpointDurations {
  /** le → calls in that bucket only (not cumulative), as the workers store them. */
  buckets: Map<string, number>;
  sum: number;
  count: number;
}

export interface FleetCounters {
  outcomes: Map<string, number>;
  calls: Array<{ endpoint: string; status: string; count: number }>;
  durations: Map<string, EndpointDurations>;
}

/** The hash's fields (`outcome|queued`, `call|suggest|200`, ...) as counters; unknown fields are ignored. */
export function parseFleetCounters(hash: Record<string, string>): FleetCounters {
  const counters: FleetCounters = { outcomes: new Map(), calls: [], durations: new Map() };
  const durationsOf = (endpoint: string): EndpointDurations => {
    let d = counters.durations.get(endpoint);
    if (!d) counters.durations.set(endpoint, (d = { buckets: new Map(), sum: 0, count: 0 }));
    return d;
  };
  for (const [field, raw] of Object.entries(hash)) {
    const value = Number(raw);
    if (!Number.isFinite(value)) continue;
    const parts = field.split('|');
    const kind = parts[0];
    if (kind === 'outcome' && parts.length === 2) counters.outcomes.set(parts[1]!, value);
    else if (kind === 'call' && parts.length >= 3) counters.calls.push({ endpoint: parts.slice(1, -1).join('|'), status: parts.at(-1)!, count: value });
    else if (kind === 'duration_bucket' && parts.length >= 3) durationsOf(parts.slice(1, -1).join('|')).buckets.set(parts.at(-1)!, value);
    else if (kind === 'duration_sum' && parts.length >= 2) durationsOf(parts.slice(1).join('|')).sum = value;
    else if (kind === 'duration_count' && parts.length >= 2) durationsOf(parts.slice(1).join('|')).count = value;
  }
  return counters;
}

export interface HistogramSample {
  metricName: string;
  labels: { endpoint: string; le?: string | number };
  value: number;
}

/** Prometheus histogram samples: cumulative buckets up to `+Inf`, then `_sum` and `_count`. */
export function histogramSamples(name: string, durations: ReadonlyMap<string, EndpointDurations>): HistogramSample[] {
  const samples: HistogramSample[] = [];
  for (const [endpoint, d] of durations) {
    let cumulative = 0;
    for (const le of DURATION_BUCKETS) {
      cumulative += d.buckets.get(String(le)) ?? 0;
      samples.push({ metricName: `${name}_bucket`, labels: { endpoint, le }, value: cumulative });
    }
    cumulative += d.buckets.get('+Inf') ?? 0;
    // `_count` is the +Inf bucket by definition; the stored count is the same figure, kept apart.
    samples.push({ metricName: `${name}_bucket`, labels: { endpoint, le: '+Inf' }, value: Math.max(cumulative, d.count) });
    samples.push({ metricName: `${name}_sum`, labels: { endpoint }, value: d.sum });
    samples.push({ metricName: `${name}_count`, labels: { endpoint }, value: Math.max(cumulative, d.count) });
  }
  return samples;
}

/**
 * A histogram whose figures come from the stored totals: prom-client's own
 * Histogram can only observe single values, so its `get()` is replaced.
 */
class StoredHistogram extends Histogram<'endpoint' | 'le'> {
  private readonly read: () => Promise<FleetCounters>;

  constructor(registry: Registry, read: () => Promise<FleetCounters>) {
    super({
      name: METRIC_NAMES.duration,
      help: 'Gateway request durations in seconds, per endpoint, across every worker.',
      labelNames: ['endpoint'],
      buckets: [...DURATION_BUCKETS],
      registers: [registry],
    });
    this.read = read;
  }

  override async get(): ReturnType<Histogram<'endpoint' | 'le'>['get']> {
    const base = await super.get();
    return { ...base, values: histogramSamples(METRIC_NAMES.duration, (await this.read()).durations) };
  }
}

/** One read shared by every collector of a scrape: prom-client asks them all at once. */
function shared<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= read().finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

export function createMetricsRegistry(redis: Redis, metricsKey: string, queue: Queue): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const fleet = shared(async () => parseFleetCounters(await redis.hgetall(metricsKey)));

  new Counter({
    name: METRIC_NAMES.finished,
    help: 'Rows finished per outcome, across every worker.',
    labelNames: ['outcome'],
    registers: [registry],
    async collect() {
      const { outcomes } = await fleet();
      this.reset();
      for (const [outcome, n] of outcomes) this.inc({ outcome }, n);
    },
  });
  new Counter({
    name: METRIC_NAMES.calls,
    help: 'Gateway calls per endpoint and HTTP status (0: no answer, a timeout or a reset), across every worker.',
    labelNames: ['endpoint', 'status'],
    registers: [registry],
    async collect() {
      const { calls } = await fleet();
      this.reset();
      for (const c of calls) this.inc({ endpoint: c.endpoint, status: c.status }, c.count);
    },
  });
  new StoredHistogram(registry, fleet);
  new Gauge({
    name: METRIC_NAMES.queue,
    help: 'Jobs of the deals queue per state.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await queue.getJobCounts();
      this.reset();
      for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
    },
  });
  return registry;
}
