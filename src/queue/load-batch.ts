/**
 * Reads an input file, validates every record, enqueues the valid ones in
 * chunks with `addBulk`, and records `invalid` for the rest: after a load every
 * row either has a job or an outcome.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FieldProblem } from '../input/deal.js';
import type { BankProfile } from '../input/profile.js';
import { detectDelimiter, readCsv } from '../input/read-csv.js';
import { createDealValidator } from '../input/validate-deal.js';
import type { Logger } from '../logger.js';
import { createBatchStore } from '../outcomes/batches.js';
import { createOutcomeStore } from '../outcomes/store.js';
import type { OutcomeRecord } from '../outcomes/types.js';
import { DEAL_JOB, dealJobId, type DealJobData } from './job-data.js';
import type { Keys } from './keys.js';

/** Enough to keep a BullMQ safety net under the worker's own retry budget (`--attempts`). */
export const JOB_ATTEMPTS_CEILING = 1000;

export interface LoadOptions {
  file: string;
  batch: string;
  profile: BankProfile;
  redis: Redis;
  keys: Keys;
  logger: Logger;
  resubmit?: boolean;
  dryRun?: boolean;
  /** Jobs per `addBulk` (one round trip each). */
  chunkSize?: number;
}

export interface LoadSummary {
  batch: string;
  read: number;
  valid: number;
  invalid: number;
  enqueued: number;
  alreadyEnqueued: number;
  invalidByField: Record<string, number>;
  unknownColumns: string[];
  seconds: number;
}

export function formatProblems(problems: readonly FieldProblem[]): string {
  return problems.map((p) => `${p.field}: ${p.message}`).join('; ');
}

export async function loadBatch(options: LoadOptions): Promise<LoadSummary> {
  const { redis, keys, batch } = options;
  const started = performance.now();
  const chunkSize = options.chunkSize ?? 500;
  const validate = createDealValidator();
  const outcomes = createOutcomeStore(redis, keys);
  const batches = createBatchStore(redis, keys);
  const queue = options.dryRun ? undefined : new Queue<DealJobData>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
  const summary: LoadSummary = {
    batch,
    read: 0,
    valid: 0,
    invalid: 0,
    enqueued: 0,
    alreadyEnqueued: 0,
    invalidByField: {},
    unknownColumns: [],
    seconds: 0,
  };
  let chunk: DealJobData[] = [];

  const flush = async (): Promise<void> => {
    if (!queue || chunk.length === 0) return;
    const jobs = chunk;
    chunk = [];
    const ids = jobs.map((j) => dealJobId(batch, j.deal.dealId));
    // Which of these jobs exist already (a second load of the same file, or a resumed one).
    const existing = redis.pipeline();
    for (const id of ids) existing.exists(`${keys.bullPrefix}:${keys.queueName}:${id}`);
    const rowsIndex = redis.pipeline();
    for (const j of jobs) rowsIndex.hset(keys.rows(batch), String(j.row), j.deal.dealId);
    const [exists] = await Promise.all([existing.exec(), rowsIndex.exec()]);
    const already = (exists ?? []).filter(([, n]) => n === 1).length;
    await queue.addBulk(
      jobs.map((data, i) => ({
        name: DEAL_JOB,
        data,
        opts: {
          jobId: ids[i]!,
          attempts: JOB_ATTEMPTS_CEILING,
          backoff: { type: 'realty' },
          removeOnComplete: { age: 7 * 24 * 3600 },
          removeOnFail: { age: 30 * 24 * 3600 },
        },
      })),
    );
    summary.alreadyEnqueued += already;
    summary.enqueued += jobs.length - already;
  };

  try {
    // An unreadable file fails here, before a batch exists for it.
    await detectDelimiter(options.file);
    if (!options.dryRun) await batches.open({ id: batch, file: options.file }, options.profile);
    for await (const record of readCsv(options.file, (h) => (summary.unknownColumns = h.unknownColumns))) {
      summary.read++;
      const result = validate(record.fields);
      const problems = result.ok ? [] : [...result.problems];
      if (record.structureProblem) problems.unshift({ field: '(row)', message: record.structureProblem });
      if (result.ok && problems.length === 0) {
        summary.valid++;
        const data: DealJobData = { batch, row: record.row, deal: result.deal };
        if (options.resubmit) data.resubmit = true;
        chunk.push(data);
        if (chunk.length >= chunkSize) await flush();
        continue;
      }
      summary.invalid++;
      for (const p of problems) summary.invalidByField[p.field] = (summary.invalidByField[p.field] ?? 0) + 1;
      if (!options.dryRun) {
        const outcome: OutcomeRecord = {
          row: record.row,
          dealId: record.fields.dealId?.trim() ?? '',
          outcome: 'invalid',
          attempts: 0,
          errorCode: 'INVALID',
          errorMessage: formatProblems(problems),
          finishedAt: new Date().toISOString(),
        };
        await outcomes.record(batch, outcome);
      }
    }
    await flush();
    if (!options.dryRun) await batches.setTotal(batch, summary.read);
  } finally {
    await queue?.close();
  }
  summary.seconds = Math.round((performance.now() - started) / 10) / 100;
  options.logger.info({ ...summary }, 'batch loaded');
  return summary;
}
