/**
 * `redis-bytes-per-finished-row`: what a night's batch leaves in Redis once every row has
 * its outcome, over its rows. A batch is loaded with `loadBatch` into the bench's own
 * redis-server, then `createDealWorker` (the news feed follower on, as `work` and `run`
 * have it) sends every row to the sandbox until each row has its outcome and the follower
 * has stored each docflow's state. `used_memory` after, minus before the load, over the
 * rows: outcomes, the row index, batch hashes, and whatever BullMQ keeps of finished jobs.
 * The same run's waiting jobs (after the load, before the worker) and a per-key-kind
 * breakdown (MEMORY USAGE) are in the figure's details.
 *
 * Since the system of record moved to the database, the ledger entries and the docflows'
 * states are no longer in Redis: they are rows of the bench's SQLite database (bench/database.ts),
 * not counted here. Figures of earlier runs counted them (the "ledger entry" and "docflow
 * state" kinds of their breakdown), so this figure is lower by about their share and is not
 * comparable with those runs.
 */
import { feedTime, readFeedState } from '../src/feed/feed-store.js';
import { createKeys, type Keys } from '../src/redis/keys.js';
import type { RedisClient } from '../src/redis/connection.js';
import type { BenchContext } from './context.js';
import { loadDeals, startWorker, untilOutcomes } from './deals.js';
import { collectGarbage, progress, rawFigure, round, type Figure } from './measure.js';
import { startSandboxProcess } from './sandbox.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A key's kind, for the breakdown: the part of the key that names what it holds. */
export function keyKind(keys: Keys, key: string): string {
  const tag = keys.bullPrefix;
  if (key.startsWith(`${tag}:batch:`)) {
    const rest = key.slice(`${tag}:batch:`.length).split(':');
    return rest.length === 1 ? 'batch meta' : `batch ${rest.slice(1).join(':')}`;
  }
  const queue = `${tag}:${keys.queueName}:`;
  if (key.startsWith(queue)) {
    const rest = key.slice(queue.length);
    // Job ids are `<batch>.<dealId base64url>`; BullMQ's own keys have no '.'.
    if (rest.includes('.')) return rest.includes(':') ? `job ${rest.slice(rest.indexOf(':') + 1)}` : 'job hash';
    return `queue ${rest}`;
  }
  return key.slice(tag.length + 1);
}

export interface KindBytes {
  kind: string;
  keys: number;
  bytes: number;
}

/** MEMORY USAGE of every key under the prefix (SAMPLES 0: every element), summed per kind. */
export async function bytesByKind(redis: RedisClient, keys: Keys): Promise<KindBytes[]> {
  const kinds = new Map<string, KindBytes>();
  let cursor = '0';
  do {
    const [next, found] = (await redis.call('SCAN', cursor, 'MATCH', `${keys.bullPrefix}*`, 'COUNT', '2000')) as [string, string[]];
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of found) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
    const replies = (await pipeline.exec()) ?? [];
    found.forEach((key, i) => {
      const kind = keyKind(keys, key);
      const k = kinds.get(kind) ?? { kind, keys: 0, bytes: 0 };
      k.keys++;
      k.bytes += Number(replies[i]?.[1] ?? 0);
      kinds.set(kind, k);
    });
  } while (cursor !== '0');
  return [...kinds.values()].sort((a, b) => b.bytes - a.bytes);
}

/** One line per kind: bytes a row, keys. */
export function describeKinds(kinds: readonly KindBytes[], rows: number): string {
  return kinds
    .filter((k) => k.bytes / rows >= 1)
    .map((k) => `${k.kind} ${Math.round(k.bytes / rows)} B/row (${k.keys} keys)`)
    .join('; ');
}

export interface MemoryRun {
  waitingBytesPerRow: number;
  finishedBytesPerRow: number;
  waiting: KindBytes[];
  finished: KindBytes[];
}

/** Loads `rows` deals, measures, sends them all, waits for the feed to show every docflow, measures again. */
export async function memoryRun(ctx: BenchContext, rows: number, tag: string): Promise<MemoryRun> {
  const prefix = `bench-${tag.toLowerCase()}`;
  const keys = createKeys(prefix);
  const sandbox = await startSandboxProcess(0);
  const redis = await ctx.redis.connect();
  try {
    await ctx.redis.clear(prefix);
    collectGarbage();
    const before = await ctx.redis.usedMemory();
    await loadDeals(ctx, redis, keys, rows, tag);
    const waitingBytes = (await ctx.redis.usedMemory()) - before;
    const waiting = await bytesByKind(redis, keys);
    const dealWorker = startWorker(ctx, sandbox, redis, keys, { feedPollMs: 200 });
    try {
      await untilOutcomes(ctx, redis, keys, rows, 30 * 60_000, 500);
      // Every row has its outcome; then the follower has stored every docflow's state once it read
      // the whole feed after that (a page that was all the feed had, read after this moment).
      const db = ctx.database.db;
      const done = await feedTime(db);
      while (((await readFeedState(db)).coveredAt ?? 0) <= done) await sleep(200);
    } finally {
      await dealWorker.close(5000);
    }
    const finishedBytes = (await ctx.redis.usedMemory()) - before;
    const finished = await bytesByKind(redis, keys);
    return { waitingBytesPerRow: waitingBytes / rows, finishedBytesPerRow: finishedBytes / rows, waiting, finished };
  } finally {
    await redis.quit();
    await ctx.redis.clear(prefix);
    await ctx.database.clear();
    await sandbox.stop();
  }
}

/** redis-bytes-per-finished-row over `rows` (200,000 for the figure; --rows for a quick look). */
export async function memoryFigures(ctx: BenchContext, rows: number): Promise<Figure[]> {
  // Bytes do not move with the host's speed: one run is the figure.
  const last = await memoryRun(ctx, rows, 'MEM');
  const finished = [last.finishedBytesPerRow];
  progress(
    `redis memory, ${rows.toLocaleString('en-US')} rows: ${Math.round(last.waitingBytesPerRow)} B/row waiting, ${Math.round(last.finishedBytesPerRow)} B/row finished`,
  );
  progress(`  waiting: ${describeKinds(last.waiting, rows)}`);
  progress(`  finished: ${describeKinds(last.finished, rows)}`);
  const perRow = (kinds: KindBytes[]) => Object.fromEntries(kinds.map((k) => [k.kind, round(k.bytes / rows)]));
  return [
    {
      ...rawFigure(
        'redis-bytes-per-finished-row',
        finished,
        'bytes',
        700,
        'lower',
        `used_memory of the bench's own redis-server after a ${rows}-row batch was loaded and sent by createDealWorker (feed follower on) until every row had its outcome and the feed had shown every docflow, minus before the load, over the rows; the ledger and the docflows' states are in the database since it became the system of record, not in this figure (runs before it counted them)`,
      ),
      details: {
        waitingBytesPerRow: round(last.waitingBytesPerRow),
        finishedByKind: perRow(last.finished),
        waitingByKind: perRow(last.waiting),
      },
    },
  ];
}
