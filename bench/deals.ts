/**
 * Deals sent through the project's own worker, their state kept for the figure that needs
 * it (the feed and reconciliation figures read what the worker left: the ledger and the
 * feed's cursor and the outcomes in the database). The worker figures (workers.ts) have their own runs.
 */
import { join } from 'node:path';
import { loadBatch } from '../src/batch/load-batch.js';
import { createOutcomeStore } from '../src/outcomes/store.js';
import type { RedisClient } from '../src/redis/connection.js';
import type { Keys } from '../src/redis/keys.js';
import { createDealWorker, type DealWorker, type DealWorkerOptions } from '../src/worker/create-worker.js';
import { createDealProcessor } from '../jobs/deal.js';
import type { BenchContext } from './context.js';
import { writeDeals } from './generate.js';
import type { SandboxProcess } from './sandbox.js';

export const BATCH = 'bench';

/** Writes `deals` suggest-needing rows and loads them with loadBatch into `keys`. */
export async function loadDeals(ctx: BenchContext, redis: RedisClient, keys: Keys, deals: number, tag: string): Promise<void> {
  const file = join(ctx.dir, `${tag}.csv`);
  await writeDeals({ file, rows: deals, format: 'csv-utf8', tag, kind: 'suggest' });
  const loaded = await loadBatch({
    file,
    batch: BATCH,
    profile: ctx.profile,
    redis,
    keys,
    db: ctx.database.db,
    logger: ctx.logger,
    rejects: join(ctx.dir, `${tag}.rejects`),
  });
  if (loaded.enqueued !== deals) throw new Error(`${tag}: ${loaded.enqueued} of ${deals} deals enqueued`);
}

/** createDealWorker as `work` starts it (concurrency 100, three tries), with the figure's own settings on top. */
export function startWorker(
  ctx: BenchContext,
  sandbox: SandboxProcess,
  redis: RedisClient,
  keys: Keys,
  extra: Partial<DealWorkerOptions> = {},
): DealWorker {
  return createDealWorker({
    processor: createDealProcessor,
    connection: redis,
    keys,
    db: ctx.database.db,
    apiUrl: sandbox.url,
    sessionId: sandbox.sessionId,
    concurrency: 100,
    attempts: 3,
    backoffMs: 1000,
    timeoutMs: 30_000,
    logger: ctx.logger,
    ...extra,
  });
}

/** Resolves once the batch has `rows` outcomes (counted every `everyMs`); throws past `limitMs`. */
export async function untilOutcomes(
  ctx: BenchContext,
  redis: RedisClient,
  keys: Keys,
  rows: number,
  limitMs: number,
  everyMs = 50,
): Promise<void> {
  const until = performance.now() + limitMs;
  const outcomes = createOutcomeStore(redis, keys, { db: ctx.database.db });
  while ((await outcomes.count(BATCH)) < rows) {
    if (performance.now() > until) throw new Error(`${rows} rows had no outcome after ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
