/**
 * `run`: load a file into a batch, process it with in-process workers until
 * every row has its outcome, write the results file. The one command a nightly
 * cron needs.
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import type { BankProfile } from '../input/profile.js';
import { TUNABLES, type Lang } from '../config.js';
import { defaultBatchId } from '../batch/batch-id.js';
import { BATCH_ID } from '../redis/keys.js';
import { loadBatch, type LoadOptions, type LoadSummary } from '../batch/load-batch.js';
import { withBoundedHeap } from './heap-growth.js';
import type { InputOptions } from '../input/open-input.js';
import type { StopReason, WaitingSummary } from '../batch/wait-batch.js';
import type { WaitingRows } from '../batch/waiting-rows.js';
import type { MissingRows } from '../batch/missing-rows.js';
import type { ResultsSummary } from '../results/write-results.js';
import { createDealWorker, type DealWorkerOptions } from '../worker/create-worker.js';
import { UsageError } from '../errors.js';
import { createDealProcessor } from '../../jobs/deal.js';
import { inputFingerprint } from '../input/reading-options.js';
import { resumeAfterRefusedSession } from './session-pause.js';
import { FEED_SHOW_WAIT_MS } from '../batch/feed-shown.js';
import { runLoadedBatch, type BatchWatch } from '../pipeline/run-loaded-batch.js';
import type { DocflowKind } from '../docflows/registry.js';

export interface RunOptions extends Omit<DealWorkerOptions, 'connection' | 'processor'>, InputOptions {
  /** The processor of `deal` jobs; jobs/deal.ts unless a test gives another. */
  processor?: DealWorkerOptions['processor'];
  file: string;
  profile: BankProfile;
  /** The profile's file: its path and sha256 are kept with the batch (`retry --missing --profile` checks a profile given again). */
  profileFile?: string;
  /** `--files-root` (load-batch.ts). */
  filesRoot?: string;
  out: string;
  batch?: string;
  redis: Redis;
  resubmit?: boolean;
  /** The rows' docflow type (`--type`); default: registrations. */
  kind?: DocflowKind;
  /** The columns its input is read with beyond the canonical fields (readingColumns). */
  columns?: readonly string[];
  /** `--again`: extracts ordered again on purpose. */
  again?: boolean;
  /** Where refused records go; default beside the input. */
  rejects?: string;
  /** How long the batch's outcomes stay in Redis after the load. */
  retentionMs?: number;
  /** The attention file: rows that need a person, in the input's own columns. */
  attention?: string;
  /** The attention file's hints. */
  lang?: Lang;
  /** The attention file in the input's own form, not Russian Excel's. */
  attentionAsInput?: boolean;
  /** Loading progress: rows read, bytes of the file's size. */
  onLoadProgress?: LoadOptions['onProgress'];
  excel?: boolean;
  /** Stops waiting (a signal): unfinished rows are written `pending`. */
  signal?: AbortSignal;
  /** Rows finished so far, of the total, and the rows waiting for a retry. */
  onProgress?: (done: number, total: number, waiting: WaitingSummary) => void;
  /** When to stop waiting (ms since the epoch): unfinished rows keep their jobs and are written `pending`, exit 3. */
  deadline?: number;
  /** How often the batch is polled, ms. */
  pollMs?: number;
  /** How long without a new outcome before rows are checked for a job (ms). */
  stallMs?: number;
  /** The longest the end waits for the news feed to be read past the resent deals (ms, src/batch/feed-shown.ts). */
  feedShowWaitMs?: number;
}

export interface RunResult {
  batch: string;
  load: LoadSummary;
  results: ResultsSummary;
  attention?: { file: string; rows: number };
  /** Why the run ended before every row finished, when it did: a refused session, a signal, a queue paused by someone, rows gone missing. */
  stoppedBecause?: StopReason;
  /** The rows with neither a job nor an outcome, when that stopped the run. */
  missing?: MissingRows;
  /** The rows waiting for a retry when the deadline stopped the run (the first of them with their reasons). */
  waiting?: WaitingRows;
  /** The pace: rows finished while this run waited, and how long it waited (ms). */
  pace: { rows: number; ms: number };
  exitCode: 0 | 1 | 3;
}

/**
 * The run's pace: rows finished while it waited over the time it waited. Rows finished before
 * the wait (refused at load, an earlier run of the batch) are not this run's.
 */
function createPace(report: RunOptions['onProgress']) {
  const began = Date.now();
  let first: number | undefined;
  let latest = 0;
  return {
    onProgress: (done: number, total: number, waiting: WaitingSummary) => {
      first ??= done;
      latest = done;
      report?.(done, total, waiting);
    },
    now: () => ({ rows: Math.max(0, latest - (first ?? latest)), ms: Date.now() - began }),
  };
}

/** The run's own deal worker, for the wait; a queue this project paused for a refused session resumes with a new run. */
async function openDealWorker(options: RunOptions, log: RunOptions['logger']): Promise<BatchWatch> {
  const { redis, keys, logger } = options;
  const dealWorker = createDealWorker({ ...options, processor: options.processor ?? createDealProcessor, connection: redis, logger });
  try {
    await resumeAfterRefusedSession({ redis, keys, queue: dealWorker.queue, logger: log, resumedBy: 'for this run' });
  } catch (err) {
    await dealWorker.close();
    throw err;
  }
  return { queue: dealWorker.queue, close: () => dealWorker.close() };
}

export async function runBatch(options: RunOptions): Promise<RunResult> {
  const { redis, keys, db, logger } = options;
  const fingerprint = await inputFingerprint(options.file, options);
  const batch = options.batch ?? defaultBatchId(options.file, fingerprint);
  if (!BATCH_ID.test(batch))
    throw new UsageError(`--batch ${JSON.stringify(batch)} is not a valid batch id: use letters, digits, '.', '_' or '-' (at most 80).`);
  const log = logger.child({ batch });

  const load = await withBoundedHeap(() =>
    loadBatch({
      file: options.file,
      fingerprint,
      batch,
      profile: options.profile,
      ...(options.profileFile !== undefined && { profileFile: options.profileFile }),
      redis,
      keys,
      db,
      logger: log,
      resubmit: options.resubmit,
      ...(options.kind && { kind: options.kind }),
      ...(options.columns && { columns: options.columns }),
      ...(options.again === true && { again: true }),
      format: options.format,
      encoding: options.encoding,
      delimiter: options.delimiter,
      mapping: options.mapping,
      ...(options.sheet !== undefined && { sheet: options.sheet }),
      rejects: options.rejects,
      lang: options.lang,
      ...(options.filesRoot !== undefined && { filesRoot: options.filesRoot }),
      retentionMs: options.retentionMs,
      onProgress: options.onLoadProgress,
    }),
  );

  const pace = createPace(options.onProgress);
  const {
    results,
    attention,
    missing,
    notes,
    exitCode,
    stopped: stoppedBecause,
  } = await runLoadedBatch({
    redis,
    keys,
    db,
    logger: log,
    batch,
    total: load.read,
    open: () => openDealWorker(options, log),
    ...(options.signal ? { signal: options.signal } : {}),
    onProgress: pace.onProgress,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    ...(options.stallMs ? { stallMs: options.stallMs } : {}),
    ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
    // The feed is read only while a follower runs here.
    ...(options.track !== false && {
      feed: {
        feedLagMs: options.feedLagMs ?? TUNABLES.feedLagMs,
        timeoutMs: options.feedShowWaitMs ?? FEED_SHOW_WAIT_MS,
        ...(options.signal ? { signal: options.signal } : {}),
      },
    }),
    results: { out: options.out, excel: options.excel },
    ...(options.attention && { attention: { out: options.attention, asInput: options.attentionAsInput } }),
    lang: options.lang,
  });
  log.info({ counts: results.counts, exitCode, stoppedBecause }, 'run finished');
  return {
    batch,
    load,
    results,
    exitCode,
    ...(attention ? { attention } : {}),
    ...(stoppedBecause ? { stoppedBecause } : {}),
    ...(missing ? { missing } : {}),
    ...(notes ? { waiting: notes.waiting } : {}),
    pace: pace.now(),
  };
}
