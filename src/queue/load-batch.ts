/**
 * Reads an input file, validates every record, enqueues the valid ones in
 * chunks with `addBulk`, and records `invalid` for the rest: after a load every
 * row either has a job or an outcome. Each chunk is awaited before the next is
 * read, so a million-row file streams through in bounded memory.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FieldProblem } from '../input/deal.js';
import { openInput, type InputFile, type InputOptions } from '../input/open-input.js';
import type { BankProfile } from '../input/profile.js';
import { createRejectsWriter, defaultRejectsPath, formatProblems } from '../input/rejects.js';
import { createDealValidator } from '../input/validate-deal.js';
import type { Logger } from '../logger.js';
import { createBatchStore } from '../outcomes/batches.js';
import { fileSha256 } from '../input/file-hash.js';
import type { OutcomeRecord } from '../outcomes/types.js';
import { DEAL_JOB, dealJobId, type DealJobData } from './job-data.js';
import type { Keys } from './keys.js';

/** A safety net far above the worker's own retry budget (`--attempts`), which decides. */
export const JOB_ATTEMPTS_CEILING = 1000;
const DAY_SECONDS = 24 * 3600;

export interface LoadOptions extends InputOptions {
  file: string;
  batch: string;
  profile: BankProfile;
  redis: Redis;
  keys: Keys;
  logger: Logger;
  resubmit?: boolean;
  dryRun?: boolean;
  /** sha256 of the file, when the caller has it already (it names the default batch). */
  sha256?: string;
  /** Where refused records go; default `<stem>.rejects<ext>` beside the input. */
  rejects?: string;
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
  invalidByField: Record<string, number>;
  unknownColumns: string[];
  rejectsFile?: string;
  dryRun: boolean;
  seconds: number;
}

interface Pending {
  jobs: DealJobData[];
  invalid: OutcomeRecord[];
}

export async function loadBatch(options: LoadOptions): Promise<LoadSummary> {
  const { redis, keys, batch } = options;
  const started = performance.now();
  const chunkSize = options.chunkSize ?? 1000;
  const input: InputFile = await openInput(options.file, options);
  const validate = createDealValidator();
  const batches = createBatchStore(redis, keys);
  const rejects = createRejectsWriter(options.rejects ?? defaultRejectsPath(options.file), input);
  const queue = options.dryRun ? undefined : new Queue<DealJobData>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
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
    invalidByField: {},
    unknownColumns: [],
    dryRun: options.dryRun ?? false,
    seconds: 0,
  };
  let pending: Pending = { jobs: [], invalid: [] };

  const flush = async (): Promise<void> => {
    const { jobs, invalid } = pending;
    pending = { jobs: [], invalid: [] };
    options.onProgress?.({ rows: summary.read, bytes: input.bytesRead(), size: input.size });
    if (!queue || (jobs.length === 0 && invalid.length === 0)) return;
    const ids = jobs.map((j) => dealJobId(batch, j.dealId));
    // One round trip: which jobs exist already (the same file loaded again, or a load
    // resumed after a crash), the row → dealId index, and the invalid rows' outcomes.
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.exists(`${keys.bullPrefix}:${keys.queueName}:${id}`);
    for (const j of jobs) pipeline.hset(keys.rows(batch), String(j.row), j.dealId);
    for (const o of invalid) pipeline.hset(keys.outcomes(batch), String(o.row), JSON.stringify(o));
    const replies = (await pipeline.exec()) ?? [];
    for (const [err] of replies) if (err) throw err;
    const already = replies.slice(0, ids.length).filter(([, n]) => n === 1).length;
    if (jobs.length > 0) {
      await queue.addBulk(
        jobs.map((data, i) => ({
          name: DEAL_JOB,
          data,
          opts: {
            jobId: ids[i]!,
            attempts: JOB_ATTEMPTS_CEILING,
            backoff: { type: 'realty' },
            removeOnComplete: { age: 7 * DAY_SECONDS },
            removeOnFail: { age: 30 * DAY_SECONDS },
          },
        })),
      );
    }
    summary.alreadyEnqueued += already;
    summary.enqueued += jobs.length - already;
  };

  try {
    if (!options.dryRun) await batches.open({ id: batch, file: options.file, sha256: options.sha256 ?? (await fileSha256(options.file)) }, options.profile);
    for await (const record of input.records()) {
      summary.read++;
      const result = validate(record.fields);
      const problems: FieldProblem[] = [...record.problems, ...(result.ok ? [] : result.problems)];
      if (result.ok && problems.length === 0) {
        summary.valid++;
        const data: DealJobData = { batch, row: record.row, dealId: result.deal.dealId, deal: result.deal };
        if (options.resubmit) data.resubmit = true;
        pending.jobs.push(data);
      } else {
        summary.invalid++;
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
    if (!options.dryRun) await batches.setTotal(batch, summary.read);
  } catch (err) {
    // The file could not be read to its end: its jobs go, and the batch says why.
    if (queue) await abandon(queue, redis, keys, batch, err).catch((e: unknown) => options.logger.error({ err: { message: String(e) } }, 'could not take back the jobs of a failed load'));
    throw err;
  } finally {
    const written = await rejects.close();
    if (written.rows > 0) summary.rejectsFile = written.file;
    await queue?.close();
  }
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
  if ((await store.state(batch)) !== 'loading') return;
  await store.fail(batch, err instanceof Error ? err.message : String(err));
  const jobKey = new RegExp(`^${escapeRegExp(`${keys.bullPrefix}:${keys.queueName}:${batch}.`)}[A-Za-z0-9_-]+$`);
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${keys.bullPrefix}:${keys.queueName}:${batch}.*`, 'COUNT', 1000);
    cursor = next;
    const ids = found.filter((k) => jobKey.test(k)).map((k) => k.slice(`${keys.bullPrefix}:${keys.queueName}:`.length));
    await Promise.all(ids.map((id) => queue.remove(id)));
  } while (cursor !== '0');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
