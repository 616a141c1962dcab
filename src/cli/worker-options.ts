/** The flags of every process that runs deal workers (`run`, `work`), and the settings they make. */
import type { Command } from 'commander';
import { DEFAULTS, TUNABLES } from '../config.js';
import { resolveWorkerSettings, type WorkerSettings } from '../worker/worker-settings.js';
import { nonNegativeInt, positiveInt, share } from './flags.js';

/** What `addWorkerOptions` puts in a command's `opts()`. */
export interface WorkerFlags {
  concurrency: number;
  attempts: number;
  backoffMs: number;
  timeoutMs: number;
  rate?: number;
  lockMs: number;
  breakerThreshold: number;
  breakerCooldownMs: number;
  feedLagMs: number;
  reconcileTimeoutMs: number;
  /** False with `--no-track`. */
  track: boolean;
}

export function addWorkerOptions(cmd: Command): Command {
  return cmd
    .option('--concurrency <n>', 'deals processed at once by this process', positiveInt('--concurrency'), DEFAULTS.concurrency)
    .option('--attempts <n>', 'tries per deal for retryable failures (501, 5xx, timeouts)', positiveInt('--attempts'), DEFAULTS.attempts)
    .option('--backoff-ms <ms>', 'first retry delay, doubled each time with jitter', nonNegativeInt('--backoff-ms'), DEFAULTS.backoffMs)
    .option('--timeout-ms <ms>', 'per gateway request', positiveInt('--timeout-ms'), DEFAULTS.timeoutMs)
    .option('--rate <n>', 'gateway requests per second across all workers (default: no limit)', positiveInt('--rate'))
    .option(
      '--lock-ms <ms>',
      'a job of a worker that stops answering is taken over after this long',
      positiveInt('--lock-ms'),
      TUNABLES.jobLockMs,
    )
    .option(
      '--breaker-threshold <share>',
      'share of 501/5xx/timeouts among recent calls that opens the circuit breaker',
      share('--breaker-threshold'),
      TUNABLES.breaker.threshold,
    )
    .option(
      '--breaker-cooldown-ms <ms>',
      'how long an open breaker waits before its probe',
      positiveInt('--breaker-cooldown-ms'),
      TUNABLES.breaker.cooldownMs,
    )
    .option(
      '--feed-lag-ms <ms>',
      "how long after a call the gateway's news feed may take to show its docflow",
      nonNegativeInt('--feed-lag-ms'),
      TUNABLES.feedLagMs,
    )
    .option(
      '--reconcile-timeout-ms <ms>',
      'how long past that a row whose answer was lost waits for the feed before it ends ERR_UNCERTAIN',
      positiveInt('--reconcile-timeout-ms'),
      TUNABLES.reconcileTimeoutMs,
    )
    .option('--no-track', 'never follow the news feed in this process (another process of the fleet must)');
}

/** The deal worker's settings from its flags (each has its default there), resolved once: the rest from TUNABLES. */
export function dealWorkerSettings(flags: WorkerFlags): WorkerSettings {
  return resolveWorkerSettings({
    concurrency: flags.concurrency,
    attempts: flags.attempts,
    backoffMs: flags.backoffMs,
    timeoutMs: flags.timeoutMs,
    ...(flags.rate !== undefined && { rate: flags.rate }),
    lockMs: flags.lockMs,
    breaker: { threshold: flags.breakerThreshold, cooldownMs: flags.breakerCooldownMs },
    feedLagMs: flags.feedLagMs,
    reconcileTimeoutMs: flags.reconcileTimeoutMs,
    track: flags.track,
  });
}
