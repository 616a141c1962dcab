/**
 * Figures 1, 2 and 7: the project's load path (`loadBatch`: read, decode,
 * validate, enqueue) against csv-parse (or a line reader) plus a bare BullMQ
 * `addBulk` of the same rows in chunks of 1000 with the same jobIds; and what a
 * waiting job costs Redis, read off the same loads.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { parse } from 'csv-parse';
import { loadBatch } from '../src/queue/load-batch.js';
import { createKeys } from '../src/queue/keys.js';
import { DEAL_JOB, dealJobId, dealJobOptions } from '../src/queue/job-data.js';
import type { RedisClient } from '../src/queue/connection.js';
import { collectGarbage, progress, ratioFigure, rawFigure, round, type Figure } from './measure.js';
import type { BenchContext } from './context.js';

const CHUNK = 1000;

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
    const summary = await loadBatch({ file, batch: 'bench', profile: ctx.profile, redis, keys: createKeys(prefix), logger: ctx.logger, rejects: join(ctx.dir, `${tag}.rejects`) });
    const seconds = (performance.now() - started) / 1000;
    if (summary.enqueued !== rows || summary.invalid !== 0) throw new Error(`${file}: expected ${rows} rows enqueued, got ${summary.enqueued} (${summary.invalid} invalid)`);
    const after = await ctx.redis.usedMemory();
    return { rowsPerSecond: rows / seconds, bytesPerJob: (after - before) / rows };
  } finally {
    await redis.quit();
    await ctx.redis.clear(prefix);
  }
}

/** Adds `records` (dealId + fields) with bare `addBulk` in chunks of 1000, the jobIds and options the project uses. */
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
  for (let run = 1; run <= ctx.runs; run++) {
    // Alternated, so a slow phase of the machine (another process) hits both sides.
    const p = await projectLoad(ctx, csv.file, csv.rows, `csv-${run}`);
    project.push(p.rowsPerSecond);
    bytes.push(p.bytesPerJob);
    baseline.push(await baselineLoad(ctx, csv.file, csv.rows, `csv-base-${run}`, 'csv'));
    progress(`loader csv run ${run}/${ctx.runs}: load ${perSecond(project.at(-1)!)}, csv-parse + addBulk ${perSecond(baseline.at(-1)!)}, ${Math.round(p.bytesPerJob)} Redis bytes/job`);
  }
  const cp1251: number[] = [];
  for (let run = 1; run <= ctx.runs; run++) {
    cp1251.push((await projectLoad(ctx, csv1251.file, csv1251.rows, `cp1251-${run}`)).rowsPerSecond);
    progress(`loader windows-1251 run ${run}/${ctx.runs}: load ${perSecond(cp1251.at(-1)!)}`);
  }
  return [
    ratioFigure('loader-csv-ratio', project, baseline, 'rows/s', 0.7, `${csv.rows} rows, ${round(csv.bytes / 1e6)} MB UTF-8 ','; baseline: csv-parse + bare addBulk of 1000, same jobIds and job options`),
    rawFigure('loader-csv-1251-rows-per-second', cp1251, 'rows/s', null, 'higher', `${csv1251.rows} rows, Windows-1251 ';' CRLF`),
    rawFigure(
      'redis-bytes-per-waiting-job',
      bytes,
      'bytes',
      null,
      'lower',
      `used_memory of the bench's own redis-server after a load of ${csv.rows} rows minus before, over the rows: the job hash, its place in the wait list and its row-index entry`,
    ),
  ];
}

/**
 * loader-jsonl-rows-per-second and enqueue-ratio. The project's enqueue step (the
 * EXISTS pipeline, the row index, addBulk) is a closure inside loadBatch and cannot
 * be called alone, so enqueue-ratio is loadBatch on a JSONL file of valid rows over
 * readline + JSON.parse + bare addBulk of the same file.
 */
export async function jsonlFigures(ctx: BenchContext): Promise<Figure[]> {
  const { jsonl } = ctx.files;
  const project: number[] = [];
  const baseline: number[] = [];
  for (let run = 1; run <= ctx.runs; run++) {
    project.push((await projectLoad(ctx, jsonl.file, jsonl.rows, `jsonl-${run}`)).rowsPerSecond);
    baseline.push(await baselineLoad(ctx, jsonl.file, jsonl.rows, `jsonl-base-${run}`, 'jsonl'));
    progress(`loader jsonl run ${run}/${ctx.runs}: load ${perSecond(project.at(-1)!)}, readline + addBulk ${perSecond(baseline.at(-1)!)}`);
  }
  return [
    rawFigure('loader-jsonl-rows-per-second', project, 'rows/s', null, 'higher', `${jsonl.rows} rows of JSON Lines`),
    ratioFigure(
      'enqueue-ratio',
      project,
      baseline,
      'jobs/s',
      0.8,
      "loadBatch's enqueue step is not callable alone: loadBatch on a JSONL file of valid rows over readline + JSON.parse + bare addBulk of the same file (chunks of 1000, same jobIds)",
    ),
  ];
}
