/**
 * The deal worker's settings, one group resolved once with its defaults (DEFAULTS, TUNABLES in
 * src/config.ts): `run` and `work` make it from their flags, runBatch and createDealWorker take
 * it whole, and nothing downstream falls back on a constant of its own.
 */
import { DEFAULTS, TUNABLES } from '../config.js';
import type { BreakerOptions } from './circuit-breaker.js';

/** What BullMQ keeps of finished jobs (TUNABLES.keptJobs). */
export interface KeptJobs {
  readonly completed: number;
  readonly failed: number;
  readonly failedMaxAgeMs: number;
}

export interface WorkerSettings {
  /** Deals processed at once by this process (`--concurrency`). */
  readonly concurrency: number;
  /** Tries per deal for retryable failures (`--attempts`). */
  readonly attempts: number;
  /** The first retry's delay, doubled each time with jitter (`--backoff-ms`). */
  readonly backoffMs: number;
  /** Per gateway request (`--timeout-ms`). */
  readonly timeoutMs: number;
  /** Gateway requests per second across every worker (`--rate`); none when undefined. */
  readonly rate: number | undefined;
  /**
   * How long a job stays locked to a worker that stopped answering (`--lock-ms`):
   * after that another worker takes it over. Locks are renewed at half of it.
   */
  readonly lockMs: number;
  /** The circuit breaker (`--breaker-*`). */
  readonly breaker: Readonly<BreakerOptions>;
  /** How long after a try's end its docflow may take to show in the news feed (`--feed-lag-ms`). */
  readonly feedLagMs: number;
  /** How long past that a row waits for the feed before it ends ERR_UNCERTAIN (`--reconcile-timeout-ms`). */
  readonly reconcileTimeoutMs: number;
  /** Follow the news feed for the fleet when no other process does (`--no-track`: false). */
  readonly track: boolean;
  /** How often the follower reads the feed once it has nothing new (ms); the follower's own default when undefined. */
  readonly feedPollMs: number | undefined;
  /** How many finished jobs BullMQ keeps. */
  readonly keptJobs: KeptJobs;
}

/** The settings as given: any of them, the breaker's in part; the rest take their defaults. */
export type WorkerSettingsInput = Partial<Omit<WorkerSettings, 'breaker'>> & { readonly breaker?: Partial<BreakerOptions> };

/** Every worker setting, the ones not given from DEFAULTS and TUNABLES. */
export function resolveWorkerSettings(given: WorkerSettingsInput): WorkerSettings {
  return Object.freeze({
    concurrency: given.concurrency ?? DEFAULTS.concurrency,
    attempts: given.attempts ?? DEFAULTS.attempts,
    backoffMs: given.backoffMs ?? DEFAULTS.backoffMs,
    timeoutMs: given.timeoutMs ?? DEFAULTS.timeoutMs,
    // 0 is no limit, as undefined.
    rate: given.rate || undefined,
    // 0 is no lock at all, which BullMQ cannot work with: the default.
    lockMs: given.lockMs || TUNABLES.jobLockMs,
    breaker: Object.freeze({ ...TUNABLES.breaker, ...given.breaker }),
    feedLagMs: given.feedLagMs ?? TUNABLES.feedLagMs,
    reconcileTimeoutMs: given.reconcileTimeoutMs ?? TUNABLES.reconcileTimeoutMs,
    track: given.track !== false,
    feedPollMs: given.feedPollMs || undefined,
    keptJobs: given.keptJobs ?? TUNABLES.keptJobs,
  });
}
