/**
 * `run`'s library: load a file into a batch, process it with in-process workers until
 * every row has its outcome, write the results file. The one command a nightly
 * cron needs, and what tests call to run a batch.
 *
 * Its settings come in typed groups, each resolved once with its defaults (the worker's in
 * src/worker/worker-settings.ts, the wait's here) and passed on whole: nothing below falls
 * back on a constant of its own.
 */
import type { Queue } from 'bullmq';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { BankProfile } from '../input/profile.js';
import type { Lang } from '../config.js';
import type { Logger } from '../logger.js';
import { defaultBatchId } from '../batch/batch-id.js';
import { BATCH_ID } from '../redis/keys.js';
import { loadBatch, type LoadOptions, type LoadSummary } from '../batch/load-batch.js';
import type { InputOptions } from '../input/open-input.js';
import type { StopReason, WaitingSummary } from '../batch/wait-batch.js';
import type { WaitingRows } from '../batch/waiting-rows.js';
import type { MissingRows } from '../batch/missing-rows.js';
import type { ResultsSummary } from '../results/write-results.js';
import { createDealWorker, type DealWorkerOptions } from '../worker/create-worker.js';
import { resolveWorkerSettings, type WorkerSettings, type WorkerSettingsInput } from '../worker/worker-settings.js';
import { UsageError } from '../errors.js';
import { inputFingerprint } from '../input/reading-options.js';
import { FEED_SHOW_WAIT_MS } from '../batch/feed-shown.js';
import { runLoadedBatch, type BatchWatch } from './run-loaded-batch.js';
import type { DocflowKind } from '../docflows/registry.js';

/** How the input is read (`--format`, `--encoding`, `--delimiter`, `--mapping`, `--sheet`, and `--type`'s columns). */
export type ReadingSettings = InputOptions;

/** The load's settings beside the reading (load-batch.ts); each absent one is the loader's own default. */
export interface LoadSettings {
  /** The rows' docflow type (`--type`); default: registrations. */
  readonly kind?: DocflowKind;
  /** The profile's file: its path and sha256 are kept with the batch (`retry --missing --profile` checks a profile given again). */
  readonly profileFile?: string;
  /** `--files-root` (load-batch.ts). */
  readonly filesRoot?: string;
  readonly resubmit?: boolean;
  /** `--again`: extracts ordered again on purpose. */
  readonly again?: boolean;
  /** How long the batch's outcomes stay in Redis after the load. */
  readonly retentionMs?: number;
}

/** How the run waits for its rows. */
export interface WaitSettings {
  /** How often the batch is polled, ms; the wait's own default when undefined (wait-batch.ts). */
  readonly pollMs: number | undefined;
  /** How long without a new outcome before rows are checked for a job (ms); the wait's own default when undefined. */
  readonly stallMs: number | undefined;
  /** When to stop waiting (ms since the epoch): unfinished rows keep their jobs and are written `pending`, exit 3. */
  readonly deadline: number | undefined;
  /** The longest the end waits for the news feed to be read past the resent deals (ms, src/batch/feed-shown.ts). */
  readonly feedShowWaitMs: number;
}

/** Every wait setting, the ones not given from their defaults. */
export function resolveWaitSettings(given: Partial<WaitSettings> = {}): WaitSettings {
  return Object.freeze({
    // 0 is the default, as undefined.
    pollMs: given.pollMs || undefined,
    stallMs: given.stallMs || undefined,
    deadline: given.deadline,
    feedShowWaitMs: given.feedShowWaitMs ?? FEED_SHOW_WAIT_MS,
  });
}

/** The files the run writes besides its batch. */
export interface OutputSettings {
  /** The results file. */
  readonly out: string;
  /** Where refused records go; default beside the input. */
  readonly rejects?: string;
  /** For Russian Excel (BOM, ";", CRLF). */
  readonly excel?: boolean;
  /** The attention file: rows that need a person, in the input's own columns. */
  readonly attention?: string;
  /** The attention file in the input's own form, not Russian Excel's. */
  readonly attentionAsInput?: boolean;
  /** The files' hints. */
  readonly lang?: Lang;
}

export interface RunOptions {
  file: string;
  profile: BankProfile;
  batch?: string;
  redis: Redis;
  keys: DealWorkerOptions['keys'];
  db: DealWorkerOptions['db'];
  logger: Logger;
  /** The gateway: its url, and the fleet's session or a fixed session id. */
  apiUrl: string;
  session?: DealWorkerOptions['session'];
  sessionId?: string;
  /** The processor of `deal` jobs: jobs/deal.ts's createDealProcessor, or a test's own (jobs/ stands above this layer). */
  processor: DealWorkerOptions['processor'];
  reading?: ReadingSettings;
  load?: LoadSettings;
  /** The deal worker's settings: a resolved group, or some of them (the rest take their defaults here). */
  worker?: WorkerSettings | WorkerSettingsInput;
  waiting?: Partial<WaitSettings>;
  output: OutputSettings;
  /** Stops waiting (a signal): unfinished rows are written `pending`. */
  signal?: AbortSignal;
  /** Loading progress: rows read, bytes of the file's size. */
  onLoadProgress?: LoadOptions['onProgress'];
  /** Rows finished so far, of the total, and the rows waiting for a retry. */
  onProgress?: (done: number, total: number, waiting: WaitingSummary) => void;
  /**
   * Runs the load: the CLI bounds the heap while it runs (src/cli/heap-growth.ts), V8's settings being
   * the process's, which a library does not own. Default: the load as it is.
   */
  aroundLoad?: <T>(load: () => Promise<T>) => Promise<T>;
  /** Called with the run's deal queue once its worker is open: the CLI resumes a queue paused for a refused session (src/cli/session-pause.ts). */
  onQueueOpen?: (queue: Queue, log: Logger) => Promise<unknown>;
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

/** The run's own deal worker, for the wait, with its settings resolved. */
async function openDealWorker(options: RunOptions, worker: WorkerSettings, log: Logger): Promise<BatchWatch> {
  const { redis, keys, db, logger, apiUrl, session, sessionId, processor } = options;
  const dealWorker = createDealWorker({ processor, connection: redis, keys, db, logger, apiUrl, session, sessionId, ...worker });
  try {
    await options.onQueueOpen?.(dealWorker.queue, log);
  } catch (err) {
    await dealWorker.close();
    throw err;
  }
  return { queue: dealWorker.queue, close: () => dealWorker.close() };
}

/** The run's load, with its reading and load settings. */
function loadRun(
  options: RunOptions,
  { fingerprint, batch, log }: { fingerprint: string; batch: string; log: Logger },
): Promise<LoadSummary> {
  const { redis, keys, db, output } = options;
  const reading = options.reading ?? {};
  const load = options.load ?? {};
  return loadBatch({
    file: options.file,
    fingerprint,
    batch,
    profile: options.profile,
    ...(load.profileFile !== undefined && { profileFile: load.profileFile }),
    redis,
    keys,
    db,
    logger: log,
    resubmit: load.resubmit,
    ...(load.kind && { kind: load.kind }),
    ...(reading.columns && { columns: reading.columns }),
    ...(load.again === true && { again: true }),
    format: reading.format,
    encoding: reading.encoding,
    delimiter: reading.delimiter,
    mapping: reading.mapping,
    ...(reading.sheet !== undefined && { sheet: reading.sheet }),
    rejects: output.rejects,
    lang: output.lang,
    ...(load.filesRoot !== undefined && { filesRoot: load.filesRoot }),
    retentionMs: load.retentionMs,
    onProgress: options.onLoadProgress,
  });
}

export async function runBatch(options: RunOptions): Promise<RunResult> {
  const { redis, keys, db, logger, output } = options;
  const reading = options.reading ?? {};
  const worker = resolveWorkerSettings(options.worker ?? {});
  const waiting = resolveWaitSettings(options.waiting);
  const fingerprint = await inputFingerprint(options.file, reading);
  const batch = options.batch ?? defaultBatchId(options.file, fingerprint);
  if (!BATCH_ID.test(batch))
    throw new UsageError(`--batch ${JSON.stringify(batch)} is not a valid batch id: use letters, digits, '.', '_' or '-' (at most 80).`);
  const log = logger.child({ batch });
  const aroundLoad = options.aroundLoad ?? ((load) => load());

  const loaded = await aroundLoad(() => loadRun(options, { fingerprint, batch, log }));

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
    total: loaded.read,
    open: () => openDealWorker(options, worker, log),
    ...(options.signal ? { signal: options.signal } : {}),
    onProgress: pace.onProgress,
    ...(waiting.pollMs !== undefined && { pollMs: waiting.pollMs }),
    ...(waiting.stallMs !== undefined && { stallMs: waiting.stallMs }),
    ...(waiting.deadline !== undefined && { deadline: waiting.deadline }),
    // The feed is read only while a follower runs here.
    ...(worker.track && {
      feed: {
        feedLagMs: worker.feedLagMs,
        timeoutMs: waiting.feedShowWaitMs,
        ...(options.signal ? { signal: options.signal } : {}),
      },
    }),
    results: { out: output.out, excel: output.excel },
    ...(output.attention && { attention: { out: output.attention, asInput: output.attentionAsInput } }),
    lang: output.lang,
  });
  log.info({ counts: results.counts, exitCode, stoppedBecause }, 'run finished');
  return {
    batch,
    load: loaded,
    results,
    exitCode,
    ...(attention ? { attention } : {}),
    ...(stoppedBecause ? { stoppedBecause } : {}),
    ...(missing ? { missing } : {}),
    ...(notes ? { waiting: notes.waiting } : {}),
    pace: pace.now(),
  };
}
