/**
 * `GET /metrics`: the fleet's counters, which every worker adds to one Redis
 * hash (src/metrics/recorder.ts), and the queue's depth per state, read on each
 * scrape; plus this process's default metrics. A registry of its own, so
 * nothing else in the process leaks into the page.
 *
 * Also read on each scrape, with bounded work: the recent batches' rows per outcome
 * and their load and progress times (batch-figures.ts: at most MAX_BATCHES batches),
 * each schedule's last tick (src/redis/schedule-ticks.ts: a hash per schedule), and
 * whether the deals queue is paused and why (BullMQ's paused state, `keys.pauseReason`).
 */
import type { Queue } from 'bullmq';
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { DURATION_BUCKETS } from '../metrics/recorder.js';
import type { Keys } from '../redis/keys.js';
import { readTicks, type TickRecord } from '../redis/schedule-ticks.js';
import { docflowStateCounts } from '../ledger/docflows.js';
import { readFeedState } from '../feed/feed-store.js';
import { readRestore } from '../ledger/restore.js';
import { duplicateTotals } from '../db/duplicates.js';
import { createBatchFigures, type BatchFigures } from './batch-figures.js';

export const METRIC_NAMES = {
  finished: 'realty_deals_finished_total',
  calls: 'realty_gateway_calls_total',
  duration: 'realty_gateway_request_duration_seconds',
  queue: 'realty_queue_jobs',
  breaker: 'realty_breaker_transitions_total',
  batchRows: 'realty_batch_rows',
  batchLoaded: 'realty_batch_loaded_timestamp_seconds',
  batchProgress: 'realty_batch_last_progress_timestamp_seconds',
  tickSuccess: 'realty_schedule_last_tick_success',
  tickTime: 'realty_schedule_last_tick_timestamp_seconds',
  paused: 'realty_queue_paused',
  docflows: 'realty_docflows',
  feedItems: 'realty_feed_items_total',
  restore: 'realty_ledger_restore_suspected',
  duplicates: 'realty_duplicate_docflows_total',
  feedLag: 'realty_feed_lag_seconds',
} as const;

/** The reasons of realty_queue_paused: `session` when the tool paused the queue for a 401 (`keys.pauseReason`). */
export const PAUSE_REASONS = ['session', 'other'] as const;

export interface EndpointDurations {
  /** le → calls in that bucket only (not cumulative), as the workers store them. */
  buckets: Map<string, number>;
  sum: number;
  count: number;
}

export interface FleetCounters {
  /** Rows finished per docflow type (the gateway's name) and outcome, summed over the workers and loads. */
  outcomes: Array<{ type: string; outcome: string; count: number }>;
  calls: Array<{ endpoint: string; status: string; count: number }>;
  durations: Map<string, EndpointDurations>;
  /** Circuit breaker transitions into each state, summed over the workers. */
  breaker: Map<string, number>;
}

/** The hash's fields (`outcome|encumbrance_request|queued`, `call|suggest|200`, ...) as counters; unknown fields are ignored. */
export function parseFleetCounters(hash: Record<string, string>): FleetCounters {
  const counters: FleetCounters = { outcomes: [], calls: [], durations: new Map(), breaker: new Map() };
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
    if (kind === 'outcome' && parts.length === 3) counters.outcomes.push({ type: parts[1]!, outcome: parts[2]!, count: value });
    else if (kind === 'breaker' && parts.length === 2) counters.breaker.set(parts[1]!, value);
    else if (kind === 'call' && parts.length >= 3)
      counters.calls.push({ endpoint: parts.slice(1, -1).join('|'), status: parts.at(-1)!, count: value });
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

export interface DashboardMetrics {
  contentType: string;
  /** The exposition text of one scrape. */
  metrics(): Promise<string>;
}

/** Prometheus label values: backslash, double quote and line feed escaped. */
function labelValue(value: string | number): string {
  return String(value).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/**
 * The duration histogram in the text format. prom-client's Histogram can only
 * observe single durations, not be set from stored totals, so this family is
 * written here; the rest goes through prom-client's registry.
 */
export function histogramText(name: string, help: string, durations: ReadonlyMap<string, EndpointDurations>): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
  for (const s of histogramSamples(name, durations)) {
    const labels = Object.entries(s.labels).map(([k, v]) => `${k}="${labelValue(v)}"`);
    lines.push(`${s.metricName}{${labels.join(',')}} ${s.value}`);
  }
  return `${lines.join('\n')}\n`;
}

export function createDashboardMetrics(redis: Redis, keys: Keys, db: Database, queue: Queue): DashboardMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const fleet = shared(async () => parseFleetCounters(await redis.hgetall(keys.metrics)));
  const batchFigures = createBatchFigures(db);
  const batches = shared(() => batchFigures.read());
  const ticks = shared(() => readTicks(redis, keys));

  new Counter({
    name: METRIC_NAMES.finished,
    help: "Rows finished per docflow type (the gateway's name) and outcome, across every worker.",
    labelNames: ['type', 'outcome'],
    registers: [registry],
    async collect() {
      const { outcomes } = await fleet();
      this.reset();
      for (const o of outcomes) this.inc({ type: o.type, outcome: o.outcome }, o.count);
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
  new Counter({
    name: METRIC_NAMES.breaker,
    help: 'Circuit breaker transitions into each state (open, half_open, closed), across every worker.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const { breaker } = await fleet();
      this.reset();
      for (const [state, n] of breaker) this.inc({ state }, n);
    },
  });
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

  registerBatchGauges(registry, batches);
  registerScheduleGauges(registry, ticks);
  new Gauge({
    name: METRIC_NAMES.paused,
    help: 'Whether the deals queue is paused (1) or not (0), on the series of its reason: session (the tool paused it for a refused session, HTTP 401), other.',
    labelNames: ['reason'],
    registers: [registry],
    async collect() {
      const [paused, reason] = await Promise.all([queue.isPaused(), redis.get(keys.pauseReason)]);
      const current = !paused ? undefined : reason === 'session' ? 'session' : 'other';
      this.reset();
      for (const r of PAUSE_REASONS) this.set({ reason: r }, r === current ? 1 : 0);
    },
  });

  new Gauge({
    name: METRIC_NAMES.docflows,
    help: 'Docflows of ours per state at the registry (queued, sent, suspended, completed, error), as the news feed last showed them.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await docflowStateCounts(db);
      this.reset();
      for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
    },
  });
  new Counter({
    name: METRIC_NAMES.feedItems,
    help: 'News feed items stored, by kind: followed (a state of a docflow of ours), resolved (a lost answer found), unknown (not ours: counted and ignored), conflicts.',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      const feed = await readFeedState(db);
      this.reset();
      for (const kind of ['followed', 'resolved', 'unknown', 'conflicts'] as const) this.inc({ kind }, feed[kind]);
    },
  });
  new Gauge({
    name: METRIC_NAMES.restore,
    help: 'Whether the database looks restored from an older copy (1) or not (0): the news feed showed what the ledger had forgotten within the last 24 h, or the database holds less of the feed than this fleet saw it hold (src/ledger/restore.ts).',
    registers: [registry],
    async collect() {
      this.set((await readRestore(db, redis, keys)).suspected ? 1 : 0);
    },
  });

  new Counter({
    name: METRIC_NAMES.duplicates,
    help: "Docflows a deal should not have, ever seen by this deployment (src/db/duplicates.ts): a second docflow for one requestId, or a try's docflow the news feed showed after the next try was sent. Each row names both (DUPLICATE_DOCFLOW).",
    registers: [registry],
    async collect() {
      this.reset();
      this.inc((await duplicateTotals(db.kysely)).count);
    },
  });
  new Gauge({
    name: METRIC_NAMES.feedLag,
    help: 'How late the news feed shows a docflow after its creation answer, as the follower measured it on our clock (src/ledger/feed-lag.ts): stat p99 over its last 1,000 docflows, and max. A try whose answer was lost waits at least 1.5 x p99 before it is judged.',
    labelNames: ['stat'],
    registers: [registry],
    async collect() {
      const lag = (await readFeedState(db)).lag;
      this.reset();
      if (lag) {
        this.set({ stat: 'p99' }, lag.p99 / 1000);
        this.set({ stat: 'max' }, lag.max / 1000);
      }
    },
  });

  return {
    contentType: registry.contentType,
    async metrics() {
      const [text, counters] = await Promise.all([registry.metrics(), fleet()]);
      return `${text}\n${histogramText(METRIC_NAMES.duration, 'Gateway request durations in seconds, per endpoint, across every worker.', counters.durations)}`;
    },
  };
}

type Read<T> = () => Promise<T>;

function registerBatchGauges(registry: Registry, batches: Read<BatchFigures[]>): void {
  new Gauge({
    name: METRIC_NAMES.batchRows,
    help: 'Rows of a batch per outcome, pending for rows without one yet; loaded batches unfinished or finished in the last 24 h, among the 50 most recent.',
    labelNames: ['batch', 'outcome'],
    registers: [registry],
    async collect() {
      const figures = await batches();
      this.reset();
      for (const f of figures) for (const [outcome, n] of Object.entries(f.rows)) this.set({ batch: f.batch, outcome }, n);
    },
  });
  new Gauge({
    name: METRIC_NAMES.batchLoaded,
    help: "When the batch's load finished (Unix seconds); the same batches as realty_batch_rows.",
    labelNames: ['batch'],
    registers: [registry],
    async collect() {
      const figures = await batches();
      this.reset();
      for (const f of figures) this.set({ batch: f.batch }, f.loadedAt / 1000);
    },
  });
  new Gauge({
    name: METRIC_NAMES.batchProgress,
    help: "When the batch's latest row finished, or its load when none has since (Unix seconds); the same batches as realty_batch_rows.",
    labelNames: ['batch'],
    registers: [registry],
    async collect() {
      const figures = await batches();
      this.reset();
      for (const f of figures) this.set({ batch: f.batch }, f.lastProgressAt / 1000);
    },
  });
}

function registerScheduleGauges(registry: Registry, ticks: Read<TickRecord[]>): void {
  new Gauge({
    name: METRIC_NAMES.tickSuccess,
    help: "1 when the schedule's last tick ran and every file of it ended done or duplicate, 0 when the tick failed or a file of it failed or stopped.",
    labelNames: ['schedule'],
    registers: [registry],
    async collect() {
      const records = await ticks();
      this.reset();
      for (const t of records) this.set({ schedule: t.name }, t.success ? 1 : 0);
    },
  });
  new Gauge({
    name: METRIC_NAMES.tickTime,
    help: "When the schedule's last tick ended (Unix seconds).",
    labelNames: ['schedule'],
    registers: [registry],
    async collect() {
      const records = await ticks();
      this.reset();
      for (const t of records) this.set({ schedule: t.name }, t.endedAt / 1000);
    },
  });
}
