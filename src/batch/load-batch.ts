/**
 * Reads an input file, validates every record, enqueues the valid ones in
 * chunks with `addBulk`, and records `invalid` for the rest: after a load every
 * row either has a job or an outcome. One chunk is in Redis while the next is
 * read (see enqueue.ts), so a million-row file streams through in bounded memory.
 */
import { resolve } from 'node:path';
import { Job, type Queue } from 'bullmq';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { FieldProblem } from '../input/deal.js';
import { openInput, type InputFile, type InputOptions } from '../input/open-input.js';
import type { BankProfile } from '../input/profile.js';
import { createRejectsWriter, defaultRejectsPath, formatProblems } from '../input/rejects.js';
import { createDealValidator } from '../input/validate-deal.js';
import type { Logger } from '../logger.js';
import { createBatchStore } from './batch-store.js';
import { fileState } from '../input/file-hash.js';
import { inputFingerprint, serializeReading } from '../input/reading.js';
import { InputError } from '../errors.js';
import { dealJobId, type DealJobData } from '../queue/job-data.js';
import { createEnqueuer, LOAD_CHUNK_SIZE, type EnqueueChunk, type Enqueuer } from './enqueue.js';
import type { Keys } from '../redis/keys.js';
import { openQueue } from '../queue/deal-queue.js';
import { isRedisOutage } from '../redis/connection.js';

export interface LoadOptions extends InputOptions {
  file: string;
  batch: string;
  profile: BankProfile;
  redis: Redis;
  keys: Keys;
  logger: Logger;
  resubmit?: boolean;
  dryRun?: boolean;
  /** The input's fingerprint, when the caller has it already (it names the default batch). */
  fingerprint?: string;
  /** Where refused records go; default `<stem>.rejects<ext>` beside the input. */
  rejects?: string;
  /** How long the batch's outcomes stay in Redis after the load (default 30 days). */
  retentionMs?: number;
  /** Jobs per `addBulk` (one round trip each). */
  chunkSize?: number;
  /** Called after each chunk: rows read, and bytes read of the file's size. */
  onProgress?: (progress: { rows: number; bytes: number; size: number }) => void;
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
  const { redis, keys, batch } = options;
  const started = performance.now();
  const chunkSize = options.chunkSize ?? LOAD_CHUNK_SIZE;
  const input: InputFile = await openInput(options.file, options);
  const validate = createDealValidator();
  const batches = createBatchStore(redis, keys);
  const rejects = createRejectsWriter(options.rejects ?? defaultRejectsPath(options.file), input);
  const queue = options.dryRun ? undefined : openQueue(redis, keys);
  const summary: LoadSummary = {
    batch,
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
  let pending: EnqueueChunk = { jobs: [], invalid: [] };
  let enqueuer: Enqueuer | undefined;

  const flush = async (): Promise<void> => {
    const chunk = pending;
    pending = { jobs: [], invalid: [] };
    options.onProgress?.({ rows: summary.read, bytes: input.bytesRead(), size: input.size });
    await enqueuer?.add(chunk);
  };

  const before = await fileState(options.file);
  // Set when this load started the batch afresh: only then may a failure take its jobs back.
  let owned = false;
  // A load that fails part-way leaves no rejects file of half its rows (an earlier one stays).
  let loaded = false;
  try {
    if (queue) {
      const fingerprint = options.fingerprint ?? (await inputFingerprint(options.file, options));
      const { fresh } = await batches.open({ id: batch, file: resolve(options.file), fingerprint, reading: serializeReading(options), resubmit: options.resubmit ?? false }, options.profile, options.retentionMs);
      // Jobs left by an earlier load of this batch that failed or died: this load makes them again.
      owned = fresh;
      if (fresh) {
        // What an earlier load of this batch that failed left: this load makes it again.
        await removeBatchJobs(queue, redis, keys, batch);
        await redis.del(keys.outcomes(batch), keys.rows(batch), keys.checkpoints(batch));
      }
      enqueuer = createEnqueuer({ redis, keys, queue, batch, bank: options.profile.organization.inn, fresh, resubmit: options.resubmit ?? false, heartbeat: () => batches.heartbeat(batch) });
    }
    for await (const record of input.records()) {
      summary.read++;
      const result = validate(record.fields);
      if (result.ok && record.problems.length === 0) {
        summary.valid++;
        const data: DealJobData = { batch, row: record.row, dealId: result.deal.dealId, deal: result.deal };
        if (options.resubmit) data.resubmit = true;
        pending.jobs.push(data);
      } else {
        summary.invalid++;
        const problems: FieldProblem[] = result.ok ? record.problems : [...record.problems, ...result.problems];
        for (const p of problems) summary.invalidByField[p.field] = (summary.invalidByField[p.field] ?? 0) + 1;
        await rejects.write(record, problems);
        pending.invalid.push({
          row: record.row,
          dealId: record.fields.dealId?.trim() ?? '',
          outcome: 'invalid',
          attempts: 0,
          errorCode: 'INVALID',
          errorMessage: formatProblems(problems),
          finishedAt: new Date().toISOString(),
        });
      }
      if (pending.jobs.length + pending.invalid.length >= chunkSize) await flush();
    }
    await flush();
    await enqueuer?.drain();
    // An export without a single deal is a broken export, not a quiet night: said loudly.
    if (summary.read === 0) throw new InputError(`${options.file} has no records: a header row and at least one record are expected.`);
    const after = await fileState(options.file);
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
      throw new InputError(`${options.file} changed while it was read (is it still being written?); load it again once it is complete.`);
    }
    if (queue) {
      const wasLoading = (await batches.state(batch)) === 'loading';
      await batches.setTotal(batch, summary.read, options.retentionMs);
      // Workers held this batch's jobs back with growing delays while it loaded: release them now.
      if (wasLoading) await promoteBatchJobs(queue, redis, keys, batch);
    }
    loaded = true;
  } catch (err) {
    // The file could not be read to its end: its jobs go, and the batch says why. When Redis
    // itself is away nothing can be taken back: the batch stays `loading`, its workers hold
    // its jobs, and loading the same input again resumes it.
    await enqueuer?.settle();
    if (queue && owned && !isRedisOutage(err)) await abandon(queue, redis, keys, batch, err).catch((e: unknown) => options.logger.error({ err: { message: String(e) } }, 'could not take back the jobs of a failed load'));
    throw err;
  } finally {
    await enqueuer?.settle();
    if (loaded) {
      const written = await rejects.close();
      if (written.rows > 0) summary.rejectsFile = written.file;
    } else await rejects.abort();
    await queue?.close();
  }
  summary.enqueued = enqueuer?.enqueued ?? 0;
  summary.alreadyEnqueued = enqueuer?.alreadyEnqueued ?? 0;
  summary.alreadySubmitted = enqueuer?.alreadySubmitted ?? 0;
  summary.unknownColumns = input.unknownColumns();
  summary.seconds = Math.round((performance.now() - started) / 10) / 100;
  options.logger.info({ ...summary }, 'batch loaded');
  return summary;
}

/**
 * Takes back the jobs a failed load added (workers hold them while the batch is
 * loading, so none was sent) and marks the batch failed.
 */
async function abandon(queue: Queue<DealJobData>, redis: Redis, keys: Keys, batch: string, err: unknown): Promise<void> {
  const store = createBatchStore(redis, keys);
  await store.fail(batch, err instanceof Error ? err.message : String(err));
  await removeBatchJobs(queue, redis, keys, batch);
}

/**
 * Removes every job of a batch. A job a worker holds at that moment cannot be
 * removed: workers only hold a loading batch's jobs for an instant (to delay
 * them), so the pass is repeated until none is left, for a few seconds at most.
 */
export async function removeBatchJobs(queue: Queue<DealJobData>, redis: Redis, keys: Keys, batch: string): Promise<number> {
  let removed = 0;
  for (let pass = 0; pass < 50; pass++) {
    let left = 0;
    let cursor = '0';
    // The batch's row index names every job it enqueued: one key, so this works on a cluster too.
    do {
      const [next, entries] = await redis.hscan(keys.rows(batch), cursor, 'COUNT', 1000);
      cursor = next;
      const ids = entries.filter((_, i) => i % 2 === 1).map((dealId) => dealJobId(batch, dealId));
      const results = await Promise.all(ids.map((id) => queue.remove(id)));
      removed += results.filter((r) => r === 1).length;
      // 0 is also "no such job" (already gone): only a job that still exists counts as left.
      const stuck = await Promise.all(ids.filter((_, i) => results[i] !== 1).map((id) => queue.getJobState(id)));
      left += stuck.filter((state) => state !== 'unknown').length;
    } while (cursor !== '0');
    if (left === 0) return removed;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`some jobs of batch ${batch} stayed locked by a worker; run the load again`);
}

/** Moves the batch's delayed jobs (held back while it loaded) to waiting. */
async function promoteBatchJobs(queue: Queue<DealJobData>, redis: Redis, keys: Keys, batch: string): Promise<void> {
  const delayed = `${keys.bullPrefix}:${keys.queueName}:delayed`;
  let cursor = '0';
  do {
    const [next, entries] = await redis.zscan(delayed, cursor, 'MATCH', `${batch}.*`, 'COUNT', 1000);
    cursor = next;
    const ids = entries.filter((_, i) => i % 2 === 0);
    await Promise.all(
      ids.map(async (id) => {
        const job = await Job.fromId(queue, id);
        // It may have left the delayed set since the scan: then there is nothing to do.
        await job?.promote().catch(() => undefined);
      }),
    );
  } while (cursor !== '0');
}
