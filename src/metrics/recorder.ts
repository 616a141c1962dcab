/**
 * Counters every worker adds to one Redis hash: rows finished per outcome,
 * gateway calls per endpoint and status, and call durations. Kept in memory and
 * flushed once a second (one HINCRBY pipeline), so the hot path pays nothing;
 * the dashboard's `/metrics` reads the hash for the whole fleet.
 *
 * Fields (all counters, never reset):
 *   outcome|<docflow type>|<outcome>       rows finished, per the gateway's type name of their batch
 *   call|<endpoint>|<status>                 status 0 = no answer (timeout, reset)
 *   duration_bucket|<endpoint>|<le>          calls with le(previous) < seconds <= le; le '+Inf' last
 *   duration_sum|<endpoint>                  seconds (HINCRBYFLOAT)
 *   duration_count|<endpoint>
 *   breaker|<state>                          circuit breaker transitions into open, half_open, closed
 */
import type { RedisClient as Redis } from '../redis/connection.js';

/** Seconds: the upper bounds of the call duration histogram. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

export interface MetricsRecorder {
  /** A row finished with `outcome`; `type`: its batch's docflow type (the gateway's name). */
  outcome(outcome: string, type: string): void;
  call(endpoint: string, status: number, ms: number): void;
  breaker(state: string): void;
  flush(): Promise<void>;
  /** Flushes what is left and stops the timer. */
  close(): Promise<void>;
}

/** The index of the first bucket the duration fits in; DURATION_BUCKETS.length for +Inf. */
function bucketIndex(seconds: number): number {
  let i = 0;
  while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
  return i;
}

interface CallFields {
  call: string;
  count: string;
  sum: string;
  /** One per DURATION_BUCKETS entry, then +Inf. */
  buckets: string[];
}

export function createMetricsRecorder(redis: Redis, key: string, flushMs = 1000): MetricsRecorder {
  let counts = new Map<string, number>();
  let sums = new Map<string, number>();
  const add = (field: string, n = 1): void => {
    counts.set(field, (counts.get(field) ?? 0) + n);
  };
  // A call's field names, made once per endpoint and status (two calls a deal).
  const callFields = new Map<string, Map<number, CallFields>>();
  const fieldsOf = (endpoint: string, status: number): CallFields => {
    let byStatus = callFields.get(endpoint);
    if (!byStatus) callFields.set(endpoint, (byStatus = new Map<number, CallFields>()));
    let fields = byStatus.get(status);
    if (!fields) {
      fields = {
        call: `call|${endpoint}|${status}`,
        count: `duration_count|${endpoint}`,
        sum: `duration_sum|${endpoint}`,
        buckets: [...DURATION_BUCKETS.map(String), '+Inf'].map((le) => `duration_bucket|${endpoint}|${le}`),
      };
      byStatus.set(status, fields);
    }
    return fields;
  };

  const flush = async (): Promise<void> => {
    if (counts.size === 0 && sums.size === 0) return;
    const [c, s] = [counts, sums];
    counts = new Map();
    sums = new Map();
    const pipeline = redis.pipeline();
    for (const [field, n] of c) pipeline.hincrby(key, field, n);
    for (const [field, v] of s) pipeline.hincrbyfloat(key, field, v);
    await pipeline.exec();
  };
  const timer = setInterval(() => {
    // Lost figures are not worth a crash; the next flush tries with what comes next.
    flush().catch(() => undefined);
  }, flushMs);
  timer.unref();

  return {
    outcome(outcome, type) {
      add(`outcome|${type}|${outcome}`);
    },
    call(endpoint, status, ms) {
      const seconds = ms / 1000;
      const fields = fieldsOf(endpoint, status);
      add(fields.call);
      add(fields.buckets[bucketIndex(seconds)]!);
      add(fields.count);
      sums.set(fields.sum, (sums.get(fields.sum) ?? 0) + seconds);
    },
    breaker(state) {
      add(`breaker|${state}`);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
