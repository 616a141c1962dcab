/**
 * Reads an input file, validates every record, enqueues the valid ones in
 * chunks with `addBulk`, and records `invalid` for the rest: after a load every
 * row either has a job or an outcome. One chunk is in Redis while the next is
 * read (see enqueue.ts), so a million-row file streams through in bounded memory.
 * What it asks of Redis goes through a load context (load-context.ts).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Queue } from 'bullmq';
import { LOADER, type Lang } from '../config.js';
import type { Database } from '../db/database.js';
import { deploymentOf } from '../db/deployment.js';
import { InputError } from '../errors.js';
import type { FieldProblem } from '../domain/deal.js';
import { fileSha256, fileState } from '../input/file-hash.js';
import { openInput, type InputFile, type InputOptions, type InputRecord } from '../input/open-input.js';
import type { BankProfile } from '../input/profile.js';
import { inputFingerprint, serializeReading } from '../input/reading-options.js';
import { createRejectsWriter, defaultRejectsPath, formatProblems } from '../input/rejects.js';
import type { Logger } from '../logger.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import type { DealJobData, StoredJobData } from '../queue/job-data.js';
import { isRedisOutage, type RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { enqueueInto, type EnqueueChunk, type Enqueuer } from './enqueue.js';
import { abandonLoad, takeBackJobs, type LoadContext } from './load-context.js';
import { canReadInThread, readChunksHere, readChunksInThread, type ReadChunk, type ReadEnd, type ReadOptions } from './read-rows.js';
import { createRedisJobStore, createRedisLoadContext } from './redis-load-context.js';
import { ERROR_CODES } from '../outcomes/error-codes.js';
import { checkedProfile, orderOf } from './load-type.js';
import { DEFAULT_KIND, readingColumns, type DocflowKind } from '../docflows/registry.js';

/** A load, but for where it goes (`loadBatchWith`'s context). */
export interface LoadRequest extends InputOptions {
  file: string;
  batch: string;
  /** The docflow type of every row (`--type`, src/docflows/); default: registrations. */
  kind?: DocflowKind;
  /** The order an extract's rows belong to (orderOf); set by the load itself. */
  order?: string;
  /** `--again`: extracts ordered again on purpose (orderOf). */
  again?: boolean;
  profile: BankProfile;
  /** The profile's file: its path and sha256 are kept with the batch (`retry --missing --profile` checks a profile given again). */
  profileFile?: string;
  logger: Logger;
  resubmit?: boolean;
  dryRun?: boolean;
  /** The input's fingerprint, when the caller has it already (it names the default batch). */
  fingerprint?: string;
  /** Where refused records go; default `<stem>.rejects<ext>` beside the input. */
  rejects?: string;
  /** The rejects file's language (`--lang`): `ru` names its columns and words its problems in Russian. */
  lang?: Lang;
  /** `--files-root`: rows may name files by absolute path, and files may live under it (else only in the input's folder tree). */
  filesRoot?: string;
  /** How long the batch's outcomes stay in Redis after the load (default 30 days). */
  retentionMs?: number;
  /** Jobs per `addBulk` (one round trip each); default `LOADER.chunkRows`. */
  chunkSize?: number;
  /**
   * Read and validate the input in a worker thread beside the enqueueing (read-rows.ts).
   * Default: yes when the build has the thread's entry (running as TypeScript source, no) and
   * the input is at least `LOADER.threadMinBytes`.
   */
  readInThread?: boolean;
  /** The id of the database the batch is loaded into (src/db/deployment.ts), kept in the batch for its workers. */
  databaseId?: string;
  /** Called after each chunk: rows read, and bytes read of the file's size. */
  onProgress?: (progress: { rows: number; bytes: number; size: number }) => void;
}

export interface LoadOptions extends LoadRequest {
  redis: Redis;
  keys: Keys;
  /** The ledger's database (already submitted deals are read from it). */
  db: Database;
}

export interface LoadSummary {
  batch: string;
  file: string;
  format: string;
  encoding: string;
  delimiter?: string;
  read: number;
  valid: number;
  invalid: number;
  enqueued: number;
  alreadyEnqueued: number;
  /** Valid rows whose deal reached the registry before (the ledger): `already_submitted`, no job. */
  alreadySubmitted: number;
  invalidByField: Record<string, number>;
  unknownColumns: string[];
  rejectsFile?: string;
  dryRun: boolean;
  seconds: number;
}

export async function loadBatch(options: LoadOptions): Promise<LoadSummary> {
  // The batch carries the database's id: a worker on another database (another ledger) refuses its jobs.
  const databaseId = options.dryRun ? undefined : (await deploymentOf(options.db, options.keys.prefix)).databaseId;
  return loadBatchWith(() => createRedisLoadContext(options.redis, options.keys, options.db), {
    ...options,
    ...(databaseId && { databaseId }),
  });
}

/**
 * The load over a context, opened once the input is (a dry run opens none). A load
 * that fails part-way after it started the batch afresh takes its jobs back and
 * marks the batch failed; with Redis itself away nothing can be taken back: the
 * batch stays `loading`, its workers hold its jobs, and loading the same input
 * again resumes it.
 */
export async function loadBatchWith(openContext: () => LoadContext, request: LoadRequest): Promise<LoadSummary> {
  const startedAt = performance.now();
  // The type's own columns are the input's fields beside the object's and the owners' (and part of its fingerprint).
  const options: LoadRequest = { ...request, columns: readingColumns(request.kind), profile: await checkedProfile(request) };
  const input = await openInput(options.file, options);
  // The header comes with the first chunk when a thread reads the file (read-rows.ts).
  let header: string[] | undefined;
  const rejects = createRejectsWriter(
    options.rejects ?? defaultRejectsPath(options.file),
    { ...input, header: () => header ?? input.header() },
    { lang: options.lang },
  );
  const context = options.dryRun ? undefined : openContext();
  const summary = emptySummary(options, input);
  const before = await fileState(options.file);
  /** The content's fingerprint the batch was opened with: a file only touched while read is still it. */
  let fingerprint: string | undefined;
  let enqueuer: Enqueuer | undefined;
  // Set when this load started the batch afresh: only then may a failure take its jobs back.
  let owned = false;
  // A load that fails part-way leaves no rejects file of half its rows (an earlier one stays).
  let loaded = false;
  try {
    const started = await startBatch(context, options);
    ({ fingerprint, owned, enqueuer } = started);
    const end = await readRows(input, { ...options, order: started.order }, summary, async (chunk, read) => {
      header ??= read.header;
      for (const { record, problems } of read.refused) await rejects.write(record, problems);
      options.onProgress?.({ rows: summary.read, bytes: read.bytes, size: input.size });
      await enqueuer?.add(chunk);
    });
    summary.unknownColumns = end.unknownColumns;
    // The whole file is read: the bar ends at its size (the last chunk may have come before a JSON file's closing bracket).
    options.onProgress?.({ rows: summary.read, bytes: input.size, size: input.size });
    await enqueuer?.drain();
    const opened = fingerprint;
    // The fingerprint names the content read with these options (`run`), or the bytes alone (the inbox's).
    const sameContent =
      opened === undefined
        ? undefined
        : async () => (await inputFingerprint(options.file, options)) === opened || (await fileSha256(options.file)) === opened;
    await checkWhole(options.file, before, sameContent);
    if (context) await markLoaded(context, options, summary.read);
    loaded = true;
  } catch (err) {
    await enqueuer?.settle();
    if (context && owned && !isRedisOutage(err))
      await abandonLoad(context, options.batch, err).catch((e: unknown) =>
        options.logger.error({ err: { message: String(e) } }, 'could not take back the jobs of a failed load'),
      );
    throw err;
  } finally {
    await enqueuer?.settle();
    if (loaded) {
      const written = await rejects.close();
      if (written.rows > 0) summary.rejectsFile = written.file;
    } else await rejects.abort();
    await context?.close();
  }
  if (enqueuer) countEnqueued(summary, enqueuer);
  summary.seconds = Math.round((performance.now() - startedAt) / 10) / 100;
  options.logger.info({ ...summary }, 'batch loaded');
  return summary;
}

function countEnqueued(summary: LoadSummary, enqueuer: Enqueuer): void {
  summary.enqueued = enqueuer.enqueued;
  summary.alreadyEnqueued = enqueuer.alreadyEnqueued;
  summary.alreadySubmitted = enqueuer.alreadySubmitted;
  // A dealId the ledger has for another property: the row was valid on its own, and is refused now.
  if (enqueuer.conflicts > 0) {
    summary.valid -= enqueuer.conflicts;
    summary.invalid += enqueuer.conflicts;
    summary.invalidByField.dealId = (summary.invalidByField.dealId ?? 0) + enqueuer.conflicts;
  }
}

/** The batch opened (or reopened) for this load, its order (orderOf), and the enqueuer of its rows; none for a dry run. */
async function startBatch(
  context: LoadContext | undefined,
  options: LoadRequest,
): Promise<{ fingerprint: string | undefined; owned: boolean; enqueuer: Enqueuer | undefined; order: string }> {
  if (!context) return { fingerprint: options.fingerprint, owned: false, enqueuer: undefined, order: orderOf(options, undefined) };
  const { fresh, fingerprint } = await openBatch(context, options);
  const order = orderOf(options, (await context.batches.get?.(options.batch))?.createdAt);
  const enqueuer = enqueueInto(context.jobs, {
    batch: options.batch,
    bank: options.profile.organization.inn,
    type: (options.kind ?? DEFAULT_KIND).type,
    fresh,
    resubmit: options.resubmit ?? false,
    heartbeat: () => context.batches.heartbeat(options.batch),
  });
  // Only a load that started the batch afresh may take its jobs back when it fails.
  return { fingerprint, owned: fresh, enqueuer, order };
}

/** Opens (or reopens) the batch; true when this load starts it afresh, after taking back what a failed load left. */
async function openBatch(context: LoadContext, options: LoadRequest): Promise<{ fresh: boolean; fingerprint: string }> {
  const fingerprint = options.fingerprint ?? (await inputFingerprint(options.file, options));
  const { fresh } = await context.batches.open(
    {
      id: options.batch,
      file: resolve(options.file),
      fingerprint,
      reading: serializeReading(options),
      resubmit: options.resubmit ?? false,
      ...(options.kind && options.kind !== DEFAULT_KIND && { type: options.kind.type }),
      ...(options.filesRoot !== undefined && { filesRoot: resolve(options.filesRoot) }),
      ...(options.databaseId !== undefined && { database: options.databaseId }),
      ...(options.profileFile !== undefined && {
        profilePath: resolve(options.profileFile),
        profileSha256: createHash('sha256')
          .update(await readFile(options.profileFile))
          .digest('hex'),
      }),
    },
    options.profile,
    options.retentionMs,
  );
  if (fresh) {
    // What an earlier load of this batch that failed left: this load makes it again.
    await takeBackJobs(context.jobs, options.batch);
    await context.jobs.clear(options.batch);
  }
  return { fresh, fingerprint };
}

/**
 * A file that changed while it was read is refused. Changed by its content: a file only touched
 * (its time moved, its bytes the same as the fingerprint the batch was opened with:
 * `sameContent`) is the file that was read. A file with its header and no record (a JSON file
 * with an empty array) is a night with no deals: a batch of none, said as "no deals" by the
 * commands. A file without even a header (0 bytes) never gets here: the reader refuses it, since
 * an export that wrote nothing at all is a failed one (docs/operations.md).
 */
async function checkWhole(
  file: string,
  before: Awaited<ReturnType<typeof fileState>>,
  sameContent: (() => Promise<boolean>) | undefined,
): Promise<void> {
  const after = await fileState(file);
  const touched = after.size === before.size && after.mtimeMs !== before.mtimeMs;
  if (after.size !== before.size || (touched && !(await sameContent?.()))) {
    throw new InputError(`${file} changed while it was read (is it still being written?); load it again once it is complete.`);
  }
}

/** The batch's total, and its jobs released if workers held them back while it loaded. */
async function markLoaded(context: LoadContext, options: LoadRequest, total: number): Promise<void> {
  const wasLoading = (await context.batches.state(options.batch)) === 'loading';
  await context.batches.setTotal(options.batch, total, options.retentionMs);
  // Workers held this batch's jobs back with growing delays while it loaded: release them now.
  if (wasLoading) await context.jobs.release(options.batch);
}

/**
 * Takes the input's chunks (read-rows.ts: in a thread of their own for a large input when the build has it):
 * a valid row becomes a job, a refused one its `invalid` outcome (and, in `flush`, a line of
 * the rejects file). They go a chunk at a time to `flush`.
 */
async function readRows(
  input: InputFile,
  options: LoadRequest,
  summary: LoadSummary,
  flush: (chunk: EnqueueChunk, read: ReadChunk) => Promise<void>,
): Promise<ReadEnd> {
  const reading: ReadOptions = {
    file: options.file,
    reading: {
      format: input.format,
      encoding: input.encoding,
      delimiter: input.delimiter,
      ...(options.mapping && { mapping: options.mapping }),
      ...(input.sheet !== undefined && { sheet: input.sheet }),
      ...(options.columns && { columns: options.columns }),
    },
    ...(options.filesRoot !== undefined && { filesRoot: options.filesRoot }),
    ...(options.kind && options.kind !== DEFAULT_KIND && { type: options.kind.type }),
    ...(options.order !== undefined && { order: options.order }),
    chunkSize: Math.max(1, options.chunkSize ?? LOADER.chunkRows),
  };
  const type = options.kind && options.kind !== DEFAULT_KIND ? options.kind.type : undefined;
  const threaded = options.readInThread ?? (input.size >= LOADER.threadMinBytes && canReadInThread());
  const chunks = threaded ? readChunksInThread(reading) : readChunksHere(input, reading);
  // Closed on the way out whatever happens: a thread that reads ahead is ended (read-rows.ts).
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) return next.value;
      const { valid, refused } = next.value;
      summary.read += valid.length + refused.length;
      summary.valid += valid.length;
      summary.invalid += refused.length;
      const jobs = valid.map(([row, dealId, c, key]): DealJobData => ({
        batch: options.batch,
        row,
        dealId,
        c,
        ...(type && { type }),
        ...(key !== undefined && { key }),
        ...(options.resubmit && { resubmit: true }),
      }));
      const invalid: OutcomeRecord[] = [];
      for (const { record, problems } of refused) {
        for (const p of problems) summary.invalidByField[p.field] = (summary.invalidByField[p.field] ?? 0) + 1;
        invalid.push(invalidOutcome(record, problems));
      }
      await flush({ jobs, invalid }, next.value);
    }
  } finally {
    await chunks.return(undefined as never);
  }
}

/**
 * A refused row's code: a dealId another property of the file has first (its hint says to give
 * the deal its own dealId), then a row that repeats another (its hint says to remove it), else INVALID.
 */
function invalidCode(problems: readonly FieldProblem[]): string {
  if (problems.some((p) => p.kind === 'dealIdConflict')) return ERROR_CODES.DEAL_ID_CONFLICT.code;
  if (problems.some((p) => p.kind === 'duplicateRow')) return ERROR_CODES.DUPLICATE_ROW.code;
  return ERROR_CODES.INVALID.code;
}

function invalidOutcome(record: InputRecord, problems: readonly FieldProblem[]): OutcomeRecord {
  return {
    row: record.row,
    dealId: record.fields.dealId?.trim() ?? '',
    outcome: 'invalid',
    attempts: 0,
    errorCode: invalidCode(problems),
    errorMessage: formatProblems(problems),
    finishedAt: new Date().toISOString(),
  };
}

function emptySummary(options: LoadRequest, input: InputFile): LoadSummary {
  return {
    batch: options.batch,
    file: options.file,
    format: input.format,
    encoding: input.encoding,
    ...(input.format === 'csv' ? { delimiter: input.delimiter } : {}),
    read: 0,
    valid: 0,
    invalid: 0,
    enqueued: 0,
    alreadyEnqueued: 0,
    alreadySubmitted: 0,
    invalidByField: {},
    unknownColumns: [],
    dryRun: options.dryRun ?? false,
    seconds: 0,
  };
}

/** Removes every job of a batch (see `takeBackJobs`), over Redis: for callers that hold a queue. */
export function removeBatchJobs(queue: Queue<StoredJobData>, redis: Redis, keys: Keys, batch: string): Promise<number> {
  return takeBackJobs(createRedisJobStore(redis, keys, queue), batch);
}
