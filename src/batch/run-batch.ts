/**
 * `run`: load a file into a batch, process it with in-process workers until
 * every row has its outcome, write the results file. The one command a nightly
 * cron needs.
 */
import { basename, extname } from 'node:path';
import type { Redis } from 'ioredis';
import type { BankProfile } from '../input/profile.js';
import { createOutcomeStore } from '../outcomes/store.js';
import { SUBMITTED_OUTCOMES, type Outcome } from '../outcomes/types.js';
import { BATCH_ID } from '../queue/keys.js';
import { loadBatch, type LoadSummary } from '../queue/load-batch.js';
import { writeResults, type ResultsSummary } from '../results/write-results.js';
import { createDealWorker, type DealWorkerOptions } from '../worker/create-worker.js';
import { UsageError } from '../errors.js';

export interface RunOptions extends Omit<DealWorkerOptions, 'connection'> {
  file: string;
  profile: BankProfile;
  out: string;
  batch?: string;
  redis: Redis;
  resubmit?: boolean;
  excel?: boolean;
  /** Stops waiting (a signal): unfinished rows are written `pending`. */
  signal?: AbortSignal;
  /** Rows finished so far, of the total. */
  onProgress?: (done: number, total: number) => void;
  /** How often the batch is polled, ms. */
  pollMs?: number;
}

export interface RunResult {
  batch: string;
  load: LoadSummary;
  results: ResultsSummary;
  /** Why the run ended before every row finished, when it did. */
  stoppedBecause?: 'session' | 'signal';
  exitCode: 0 | 1 | 3;
}

/** `<file stem>-<UTC yyyymmdd-hhmmss>`: readable in `status` and safe in keys and file names. */
export function defaultBatchId(file: string, now = new Date()): string {
  const stem = basename(file, extname(file)).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 40) || 'batch';
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stem}-${stamp}`;
}

/** Rows whose outcome needs a person (anything but submitted or still pending). */
export function needsAttention(counts: Record<Outcome, number>): boolean {
  return Object.entries(counts).some(([o, n]) => n > 0 && o !== 'pending' && !SUBMITTED_OUTCOMES.has(o as Outcome));
}

/** product.md: 0 every row submitted; 3 done but some need attention; 1 could not finish. */
export function exitCodeFor(counts: Record<Outcome, number>): 0 | 1 | 3 {
  if (counts.pending > 0) return 1;
  return needsAttention(counts) ? 3 : 0;
}

export async function runBatch(options: RunOptions): Promise<RunResult> {
  const { redis, keys, logger } = options;
  const batch = options.batch ?? defaultBatchId(options.file);
  if (!BATCH_ID.test(batch)) throw new UsageError(`--batch ${JSON.stringify(batch)} is not a valid batch id: use letters, digits, '.', '_' or '-' (at most 80).`);
  const log = logger.child({ batch });

  const dealWorker = createDealWorker({ ...options, connection: redis, logger: log });
  let stoppedBecause: RunResult['stoppedBecause'];
  let load: LoadSummary;
  try {
    // A queue this project paused for a refused session resumes with a new run: if the
    // session is still refused, the first job pauses it again.
    if ((await redis.get(keys.pauseReason)) === 'session') {
      await redis.del(keys.pauseReason);
      await dealWorker.queue.resume();
    }
    load = await loadBatch({ file: options.file, batch, profile: options.profile, redis, keys, logger: log, resubmit: options.resubmit });
    const outcomes = createOutcomeStore(redis, keys);
    const pollMs = options.pollMs ?? 200;
    for (;;) {
      const done = await outcomes.count(batch);
      options.onProgress?.(done, load.read);
      if (done >= load.read) break;
      if (options.signal?.aborted) {
        stoppedBecause = 'signal';
        break;
      }
      if ((await redis.get(keys.pauseReason)) === 'session' && (await dealWorker.queue.isPaused())) {
        stoppedBecause = 'session';
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  } finally {
    await dealWorker.close();
  }
  const results = await writeResults({ redis, keys, batch, total: load.read, out: options.out, excel: options.excel });
  const exitCode = stoppedBecause ? 1 : exitCodeFor(results.counts);
  log.info({ counts: results.counts, exitCode, stoppedBecause }, 'run finished');
  return { batch, load, results, exitCode, ...(stoppedBecause ? { stoppedBecause } : {}) };
}
