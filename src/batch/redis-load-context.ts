/**
 * The load's context over Redis (load-context.ts): the batch store, the deal queue
 * opened on the caller's connection, the batch's row index and outcomes; and the ledger,
 * in the database.
 */
import { Job, type Queue } from 'bullmq';
import { LOADER } from '../config.js';
import type { Database } from '../db/database.js';
import { readSubmittedDeals } from '../ledger/ledger.js';
import { openQueue } from '../queue/deal-queue.js';
import { DEAL_JOB, dealJobId, dealJobOptions, storedJobData, type DealJobData, type StoredJobData } from '../queue/job-data.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { createBatchStore } from './batch-store.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import { clearOutcomes, rowsWithOutcome, writeOutcomes } from '../ledger/outcome-rows.js';
import type { JobStore, LoadContext } from './load-context.js';
import { luaText } from '../redis/lua.js';
import type { DocflowType } from '../domain/gateway.js';
import { DEFAULT_KIND } from '../docflows/registry.js';

/**
 * Which of a chunk's jobs exist, one 0 or 1 a key: one command for the chunk, where an
 * EXISTS a job would be as many commands as the jobs `addBulk` adds, each built and answered
 * by ioredis (src/redis/lua/jobs-exist.lua). Sent in full (EVAL): a few hundred bytes a chunk, and it stays in order with
 * the pipeline, where EVALSHA's fallback after NOSCRIPT would run after `addBulk`.
 */
const JOBS_EXIST = luaText('jobs-exist');

/** Opens the deal queue on `redis` itself; `close` closes the queue, never the connection (nor the database). */
export function createRedisLoadContext(redis: Redis, keys: Keys, db: Database): LoadContext {
  const queue = openQueue(redis, keys);
  return { batches: createBatchStore(redis, keys, db), jobs: createRedisJobStore(redis, keys, queue, db), close: () => queue.close() };
}

/** Whether each job's row has its outcome already (one query). */
async function finishedRows(db: Database, batch: string, jobs: readonly DealJobData[]): Promise<boolean[]> {
  const found = await rowsWithOutcome(
    db.kysely,
    batch,
    jobs.map((j) => j.row),
  );
  return jobs.map((j) => found.has(j.row));
}

/** The fleet's outcome counters a chunk's refused rows add to (src/metrics/recorder.ts): field, count. */
function outcomeCounts(outcomes: readonly OutcomeRecord[], type: DocflowType): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { outcome } of outcomes) {
    const field = `outcome|${type}|${outcome}`;
    counts.set(field, (counts.get(field) ?? 0) + 1);
  }
  return counts;
}

/**
 * `queue` is opened on `redis` itself (see `openQueue`): its commands then follow the
 * store's own on one connection, in order, which `write` relies on.
 */
/** The jobs of `addBulk`, each under its id, with the deal queue's options. */
function bulk(ids: readonly string[], jobs: readonly DealJobData[]) {
  const jobOptions = dealJobOptions();
  return jobs.map((data, i) => ({ name: DEAL_JOB, data: storedJobData(data), opts: { ...jobOptions, jobId: ids[i]! } }));
}

/** `db`: the database of the ledger and the outcomes (a store that only takes jobs back needs none). */
export function createRedisJobStore(redis: Redis, keys: Keys, queue: Queue<StoredJobData>, db?: Database): JobStore {
  const jobKey = `${keys.bullPrefix}:${keys.queueName}:`;
  /** One chunk in one round trip (see JobStore.write). */
  const writeChunk = async (
    batch: string,
    jobs: readonly DealJobData[],
    outcomes: readonly OutcomeRecord[],
    type: DocflowType,
  ): Promise<boolean[]> => {
    const ids = jobs.map((j) => dealJobId(batch, j.dealId));
    // The refused rows' outcomes first, committed: none of them ever has a job.
    if (outcomes.length > 0) {
      const database = need(db);
      await database.transaction(async (trx) => writeOutcomes(trx, batch, outcomes, await database.now(trx)));
    }
    const pipeline = redis.pipeline();
    if (ids.length > 0) pipeline.eval(JOBS_EXIST, ids.length, ...ids.map((id) => jobKey + id));
    // The index is written before the jobs (one connection, in order): a load that dies
    // in between leaves no job its retry or its clean-up cannot find.
    if (jobs.length > 0) pipeline.hset(keys.rows(batch), ...jobs.flatMap((j) => [String(j.row), j.dealId]));
    for (const [field, n] of outcomeCounts(outcomes, type)) pipeline.hincrby(keys.metrics, field, n);
    const written = pipeline.exec();
    const added = jobs.length > 0 ? queue.addBulk(bulk(ids, jobs)) : undefined;
    const [replies] = await Promise.all([written, added]);
    for (const [err] of replies ?? []) if (err) throw err;
    // Answered before addBulk ran (one connection, in order): these jobs were there already.
    const existed = ids.length > 0 ? (replies?.[0]?.[1] as number[]) : [];
    return ids.map((_, i) => existed[i] === 1);
  };

  return {
    async submittedDeals(bank, dealIds, type) {
      return readSubmittedDeals(need(db), bank, dealIds, type);
    },

    async write(batch, allJobs, outcomes, options = {}) {
      // A row with its outcome never becomes a job again: its finished job may be long gone.
      const finished = options.skipFinished && allJobs.length > 0 ? await finishedRows(need(db), batch, allJobs) : undefined;
      const jobs = finished ? allJobs.filter((_, i) => !finished[i]) : allJobs;
      const existed = await writeChunk(batch, jobs, outcomes, options.type ?? DEFAULT_KIND.type);
      if (!finished) return existed;
      let next = 0;
      return finished.map((done) => done || existed[next++]!);
    },

    async add(batch, jobs) {
      await queue.addBulk(
        bulk(
          jobs.map((j) => dealJobId(batch, j.dealId)),
          jobs,
        ),
      );
    },

    async remove(batch, dealIds) {
      const ids = dealIds.map((dealId) => dealJobId(batch, dealId));
      const results = await Promise.all(ids.map((id) => queue.remove(id)));
      // 0 is also "no such job" (already gone, or BullMQ's own clean-up): only a job that still exists is held.
      const states = await Promise.all(ids.filter((_, i) => results[i] !== 1).map((id) => queue.getJobState(id)));
      return { removed: results.filter((r) => r === 1).length, held: states.filter((state) => state !== 'unknown').length };
    },

    async *rowPages(batch) {
      let cursor = '0';
      do {
        const [next, entries] = await redis.hscan(keys.rows(batch), cursor, 'COUNT', LOADER.scanCount);
        cursor = next;
        yield entries.filter((_, i) => i % 2 === 1);
      } while (cursor !== '0');
    },

    async clear(batch) {
      await redis.del(keys.rows(batch), keys.checkpoints(batch));
      await clearOutcomes(need(db).kysely, batch);
    },

    async release(batch) {
      const delayed = `${keys.bullPrefix}:${keys.queueName}:delayed`;
      let cursor = '0';
      do {
        const [next, entries] = await redis.zscan(delayed, cursor, 'MATCH', `${batch}.*`, 'COUNT', LOADER.scanCount);
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
    },
  };
}

function need(db: Database | undefined): Database {
  if (!db) throw new Error('a load needs the database of the ledger and the outcomes');
  return db;
}
