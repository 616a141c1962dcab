/**
 * Figures 1, 2 and 7: the project's load path (`loadBatch`: read, decode,
 * validate, enqueue) against csv-parse (or a line reader) plus a bare BullMQ
 * `addBulk` of the same rows with the same chunk size and jobIds; the enqueue
 * step alone against bare `addBulk` of the same payloads; and what a waiting job
 * costs Redis, read off the same loads.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { parse } from 'csv-parse';
import { loadBatch } from '../src/batch/load-batch.js';
import { createEnqueuer, LOAD_CHUNK_SIZE } from '../src/batch/enqueue.js';
import { openQueue } from '../src/queue/deal-queue.js';
import { createKeys } from '../src/redis/keys.js';
import { DEAL_JOB, dealJobId, dealJobOptions, type DealJobData } from '../src/queue/job-data.js';
import { openInput } from '../src/input/open-input.js';
import { createDealValidator } from '../src/input/validate-deal.js';
import { createBatchStore } from '../src/batch/batch-store.js';
import type { RedisClient } from '../src/redis/connection.js';
import { collectGarbage, progress, ratioFigure, rawFigure, round, type Figure } from './measure.js';
import { writeDeals } from './generate.js';
import type { BenchContext } from './context.js';

/** Rows of the untimed warm-up load (each side) before the measured runs; half in the quick profile. */
const WARM_UP_ROWS = { quick: 10_000, full: 20_000 };

/** The baselines send chunks of the project's own size. */
const CHUNK = LOAD_CHUNK_SIZE;

interface LoadRun {
  rowsPerSecond: number;
  /** used_memory after the load minus before, per enqueued job. */
  bytesPerJob: number;
}

/** One `loadBatch` of the file into an empty prefix; the prefix is emptied afterwards. */
async function projectLoad(ctx: BenchContext, file: string, rows: number, tag: string): Promise<LoadRun> {
  const prefix = `bench-${tag}`;
  const redis = await ctx.redis.connect();
  collectGarbage();
  try {
    const before = await ctx.redis.usedMemory();
    const started = performance.now();
    const summary = await loadBatch({
      file,
      batch: 'bench',
      profile: ctx.profile,
      redis,
      keys: createKeys(prefix),
      db: ctx.database.db,
      logger: ctx.logger,
      rejects: join(ctx.dir, `${tag}.rejects`),
    });
    const seconds = (performance.now() - started) / 1000;
    if (summary.enqueued !== rows || summary.invalid !== 0)
      throw new Error(`${file}: expected ${rows} rows enqueued, got ${summary.enqueued} (${summary.invalid} invalid)`);
    const after = await ctx.redis.usedMemory();
    return { rowsPerSecond: rows / seconds, bytesPerJob: (after - before) / rows };
  } finally {
    await redis.quit();
    await ctx.redis.clear(prefix);
    await ctx.database.clear();
  }
}

/** Adds `records` (dealId + fields) with bare `addBulk`, each chunk awaited, the chunk size, jobIds and options the project uses. */
async function bareEnqueue(redis: RedisClient, prefix: string, records: AsyncIterable<Record<string, string>>): Promise<number> {
  const queue = new Queue(createKeys(prefix).queueName, { connection: redis, prefix: `{${prefix}}` });
  queue.on('error', () => undefined);
  const batch = 'bench';
  let row = 0;
  let jobs: Array<{ name: string; data: unknown; opts: ReturnType<typeof dealJobOptions> & { jobId: string } }> = [];
  try {
    for await (const deal of records) {
      row++;
      const dealId = deal.dealId ?? '';
      jobs.push({ name: DEAL_JOB, data: { batch, row, dealId, deal }, opts: { ...dealJobOptions(), jobId: dealJobId(batch, dealId) } });
      if (jobs.length === CHUNK) {
        await queue.addBulk(jobs);
        jobs = [];
      }
    }
    if (jobs.length > 0) await queue.addBulk(jobs);
  } finally {
    await queue.close();
  }
  return row;
}

/** csv-parse over the file; each record as its non-empty cells keyed by the header. */
async function* csvRecords(file: string): AsyncGenerator<Record<string, string>> {
  const parser = createReadStream(file).pipe(parse({ relax_column_count: true, skip_empty_lines: true }));
  let header: string[] | undefined;
  for await (const cells of parser as AsyncIterable<string[]>) {
    if (!header) {
      header = cells;
      continue;
    }
    const record: Record<string, string> = {};
    for (let i = 0; i < header.length; i++) if (cells[i]) record[header[i]!] = cells[i]!;
    yield record;
  }
}

/** node:readline over the file, JSON.parse per line. */
async function* jsonlRecords(file: string): AsyncGenerator<Record<string, string>> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) if (line.trim() !== '') yield JSON.parse(line) as Record<string, string>;
}

async function baselineLoad(ctx: BenchContext, file: string, rows: number, tag: string, format: 'csv' | 'jsonl'): Promise<number> {
  const prefix = `bench-${tag}`;
  const redis = await ctx.redis.connect();
  collectGarbage();
  try {
    const started = performance.now();
    const read = await bareEnqueue(redis, prefix, format === 'csv' ? csvRecords(file) : jsonlRecords(file));
    const seconds = (performance.now() - started) / 1000;
    if (read !== rows) throw new Error(`${file}: the baseline read ${read} rows, expected ${rows}`);
    return rows / seconds;
  } finally {
    await redis.quit();
    await ctx.redis.clear(prefix);
  }
}

const perSecond = (n: number): string => `${Math.round(n).toLocaleString('en-US')} rows/s`;

/** loader-csv-ratio, loader-csv-1251-rows-per-second, redis-bytes-per-waiting-job. */
export async function loaderFigures(ctx: BenchContext): Promise<Figure[]> {
  const { csv, csv1251 } = ctx.files;
  const project: number[] = [];
  const baseline: number[] = [];
  const bytes: number[] = [];
  // A warm-up of both sides, not counted: the project's first run would otherwise also
  // warm up csv-parse and BullMQ for the baseline's first run, which follows it.
  const warm = join(ctx.dir, 'warm-up.csv');
  const warmRows = ctx.full ? WARM_UP_ROWS.full : WARM_UP_ROWS.quick;
  await writeDeals({ file: warm, rows: warmRows, format: 'csv-utf8', tag: 'H' });
  await projectLoad(ctx, warm, warmRows, 'csv-warm');
  await baselineLoad(ctx, warm, warmRows, 'csv-base-warm', 'csv');
  progress(`loader warm-up: ${warmRows.toLocaleString('en-US')} rows each side, not counted`);
  for (let run = 1; run <= ctx.runs; run++) {
    // Alternated, so a slow phase of the machine (another process) hits both sides.
    const p = await projectLoad(ctx, csv.file, csv.rows, `csv-${run}`);
    project.push(p.rowsPerSecond);
    bytes.push(p.bytesPerJob);
    baseline.push(await baselineLoad(ctx, csv.file, csv.rows, `csv-base-${run}`, 'csv'));
    progress(
      `loader csv run ${run}/${ctx.runs}: load ${perSecond(project.at(-1)!)}, csv-parse + addBulk ${perSecond(baseline.at(-1)!)}, ${Math.round(p.bytesPerJob)} Redis bytes/job`,
    );
  }
  const cp1251: number[] = [];
  for (let run = 1; run <= ctx.runs; run++) {
    cp1251.push((await projectLoad(ctx, csv1251.file, csv1251.rows, `cp1251-${run}`)).rowsPerSecond);
    progress(`loader windows-1251 run ${run}/${ctx.runs}: load ${perSecond(cp1251.at(-1)!)}`);
  }
  return [
    ratioFigure(
      'loader-csv-ratio',
      project,
      baseline,
      'rows/s',
      0.9,
      `${csv.rows} rows, ${round(csv.bytes / 1e6)} MB UTF-8 ','; baseline: csv-parse + bare addBulk in chunks of ${CHUNK}, each awaited, same jobIds and job options`,
    ),
    rawFigure('loader-csv-1251-rows-per-second', cp1251, 'rows/s', null, 'higher', `${csv1251.rows} rows, Windows-1251 ';' CRLF`),
    rawFigure(
      'redis-bytes-per-waiting-job',
      bytes,
      'bytes',
      1500,
      'lower',
      `used_memory of the bench's own redis-server after a load of ${csv.rows} rows minus before, over the rows: the job hash, its place in the wait list and its row-index entry`,
    ),
  ];
}

/** loader-jsonl-rows-per-second: `loadBatch` on JSON Lines (no baseline: informational). */
export async function jsonlFigures(ctx: BenchContext): Promise<Figure[]> {
  const { jsonl } = ctx.files;
  const project: number[] = [];
  const baseline: number[] = [];
  for (let run = 1; run <= ctx.runs; run++) {
    project.push((await projectLoad(ctx, jsonl.file, jsonl.rows, `jsonl-${run}`)).rowsPerSecond);
    baseline.push(await baselineLoad(ctx, jsonl.file, jsonl.rows, `jsonl-base-${run}`, 'jsonl'));
    progress(`loader jsonl run ${run}/${ctx.runs}: load ${perSecond(project.at(-1)!)}, readline + addBulk ${perSecond(baseline.at(-1)!)}`);
  }
  const figure = rawFigure('loader-jsonl-rows-per-second', project, 'rows/s', null, 'higher', `${jsonl.rows} rows of JSON Lines`);
  return [{ ...figure, details: { 'readline + JSON.parse + bare addBulk, rows/s (for comparison)': baseline.map(Math.round) } }];
}

/** The job payloads `loadBatch` makes of a file: read and validated before any clock starts. */
async function payloadsOf(file: string): Promise<DealJobData[]> {
  const input = await openInput(file);
  const validate = createDealValidator();
  const payloads: DealJobData[] = [];
  for await (const record of input.records()) {
    const result = validate(record.fields);
    if (!result.ok) throw new Error(`${file}: row ${record.row} is not valid`);
    payloads.push({ batch: 'bench', row: record.row, dealId: result.deal.dealId, deal: result.deal });
  }
  return payloads;
}

/** Jobs/s of the project's enqueue step (`createEnqueuer`, as `loadBatch` uses it on a fresh batch) for `payloads`. */
async function projectEnqueue(ctx: BenchContext, payloads: DealJobData[], tag: string): Promise<number> {
  const prefix = `bench-${tag}`;
  const redis = await ctx.redis.connect();
  const keys = createKeys(prefix);
  const queue = openQueue(redis, keys);
  collectGarbage();
  try {
    const batches = createBatchStore(redis, keys, ctx.database.db);
    const started = performance.now();
    const enqueuer = createEnqueuer({
      redis,
      keys,
      queue,
      db: ctx.database.db,
      batch: 'bench',
      bank: '7701234567',
      fresh: true,
      heartbeat: () => batches.heartbeat('bench'),
    });
    for (let i = 0; i < payloads.length; i += CHUNK) await enqueuer.add({ jobs: payloads.slice(i, i + CHUNK), invalid: [] });
    await enqueuer.drain();
    const seconds = (performance.now() - started) / 1000;
    if (enqueuer.enqueued !== payloads.length) throw new Error(`enqueue: ${enqueuer.enqueued} of ${payloads.length} jobs`);
    return payloads.length / seconds;
  } finally {
    await queue.close();
    await redis.quit();
    await ctx.redis.clear(prefix);
    await ctx.database.clear();
  }
}

/** Jobs/s of bare `addBulk` for the same payloads: chunks of the same size, each awaited, the same jobIds and options. */
async function bareAddBulk(ctx: BenchContext, payloads: DealJobData[], tag: string): Promise<number> {
  const prefix = `bench-${tag}`;
  const redis = await ctx.redis.connect();
  const queue = new Queue(createKeys(prefix).queueName, { connection: redis, prefix: `{${prefix}}` });
  queue.on('error', () => undefined);
  collectGarbage();
  try {
    const started = performance.now();
    for (let i = 0; i < payloads.length; i += CHUNK) {
      await queue.addBulk(
        payloads
          .slice(i, i + CHUNK)
          .map((data) => ({ name: DEAL_JOB, data, opts: { ...dealJobOptions(), jobId: dealJobId(data.batch, data.dealId) } })),
      );
    }
    const seconds = (performance.now() - started) / 1000;
    const waiting = await queue.getWaitingCount();
    if (waiting !== payloads.length) throw new Error(`bare addBulk: ${waiting} of ${payloads.length} jobs waiting`);
    return payloads.length / seconds;
  } finally {
    await queue.close();
    await redis.quit();
    await ctx.redis.clear(prefix);
  }
}

/**
 * enqueue-ratio: the enqueue step alone (the row index, the heartbeat, `addBulk`,
 * one chunk in flight while the next is handed over) over bare `addBulk` of the
 * same payloads, both from payloads made before the clock starts.
 */
export async function enqueueFigures(ctx: BenchContext): Promise<Figure[]> {
  const { jsonl } = ctx.files;
  const payloads = await payloadsOf(jsonl.file);
  const project: number[] = [];
  const baseline: number[] = [];
  for (let run = 1; run <= ctx.runs; run++) {
    project.push(await projectEnqueue(ctx, payloads, `enqueue-${run}`));
    baseline.push(await bareAddBulk(ctx, payloads, `enqueue-base-${run}`));
    progress(`enqueue run ${run}/${ctx.runs}: project ${perSecond(project.at(-1)!)}, bare addBulk ${perSecond(baseline.at(-1)!)}`);
  }
  return [
    ratioFigure(
      'enqueue-ratio',
      project,
      baseline,
      'jobs/s',
      0.8,
      `${payloads.length} validated deals as job payloads, made before the clock starts; project: createEnqueuer (as loadBatch on a fresh batch) in chunks of ${CHUNK}; baseline: Queue.addBulk of the same payloads, same chunks, jobIds and options, each awaited`,
    ),
  ];
}
