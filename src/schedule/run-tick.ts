/**
 * One tick of a nightly schedule: the new, complete files of the inbox each run
 * as their own batch; when a batch is done its results, attention file and
 * summary land in the outbox and the input moves to `<inbox>/processed/`.
 *
 * A file runs once: its sha256 is remembered, and the same content dropped
 * again, under any name, is reported and set aside. A file whose size or time
 * changed since the previous tick is still being written: it waits. One tick at
 * a time per schedule across every host (a lock in Redis with an expiry).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, stat, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { RedisClient as Redis } from '../queue/connection.js';
import { RealtyBatchError } from '../errors.js';
import { fileSha256 } from '../input/file-hash.js';
import { loadProfile } from '../input/profile.js';
import { inputFingerprint } from '../input/reading.js';
import type { Logger } from '../logger.js';
import { SUBMITTED_OUTCOMES, type Outcome } from '../outcomes/types.js';
import type { Keys } from '../queue/keys.js';
import { loadBatch } from '../queue/load-batch.js';
import { writeAttention } from '../results/attention.js';
import { writeResults } from '../results/write-results.js';
import { defaultBatchId, exitCodeFor } from '../batch/run-batch.js';
import { waitForBatch } from '../batch/wait-batch.js';
import { notify } from './notify.js';
import type { TickData } from './scheduler.js';
import { openQueue } from '../queue/deal-queue.js';

export interface TickContext {
  redis: Redis;
  keys: Keys;
  logger: Logger;
  /** Stops waiting for a batch (the worker is shutting down); the file stays in the inbox. */
  signal?: AbortSignal;
  pollMs?: number;
}

export interface FileSummary {
  file: string;
  status: 'done' | 'duplicate' | 'failed' | 'stopped';
  sha256: string;
  batch?: string;
  rows?: number;
  outcomes?: Partial<Record<Outcome, number>>;
  /** As `run` would exit: 0 all submitted, 3 some rows need attention, 1 could not finish. */
  exitStatus: 0 | 1 | 3;
  startedAt: string;
  finishedAt: string;
  seconds: number;
  results?: string;
  attention?: string;
  error?: string;
  /** duplicate: where the same content ran before. */
  earlier?: { file: string; batch: string; at: string };
}

export interface TickResult {
  /** The previous tick of this schedule still held the lock. */
  skipped?: 'previous tick still running';
  waiting: string[];
  files: FileSummary[];
}

const LOCK_MS = 60_000;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
/** Names a person or a program leaves while writing: never inputs. */
const TEMPORARY = /^\.|^~\$|\.(part|tmp|crdownload|partial)$/i;

export async function runTick(data: TickData, ctx: TickContext): Promise<TickResult> {
  const { redis, keys, logger } = ctx;
  const log = logger.child({ schedule: data.name });
  const lockKey = `${keys.bullPrefix}:schedule:${data.name}:lock`;
  const token = randomUUID();
  if ((await redis.set(lockKey, token, 'PX', LOCK_MS, 'NX')) !== 'OK') {
    log.info('the previous tick of this schedule is still running; this one returns');
    return { skipped: 'previous tick still running', waiting: [], files: [] };
  }
  const renew = setInterval(() => {
    redis.pexpire(lockKey, LOCK_MS).catch(() => undefined);
  }, LOCK_MS / 3);
  try {
    const { ready, waiting } = await readyFiles(data, ctx);
    for (const name of waiting) log.info({ file: name }, 'still being written; it waits for the next tick');
    const files: FileSummary[] = [];
    for (const name of ready) {
      if (ctx.signal?.aborted) break;
      files.push(await runFile(data, name, ctx, log));
    }
    return { waiting, files };
  } finally {
    clearInterval(renew);
    await redis.eval(RELEASE, 1, lockKey, token).catch(() => undefined);
  }
}

/** Regular files of the inbox whose size and time did not change since the previous tick. */
async function readyFiles(data: TickData, ctx: TickContext): Promise<{ ready: string[]; waiting: string[] }> {
  const seenKey = `${ctx.keys.bullPrefix}:schedule:${data.name}:seen`;
  const entries = await readdir(data.inbox, { withFileTypes: true });
  const names = entries.filter((e) => e.isFile() && !TEMPORARY.test(e.name)).map((e) => e.name).sort();
  const before = await ctx.redis.hgetall(seenKey);
  const now: Record<string, string> = {};
  for (const name of names) {
    const s = await stat(join(data.inbox, name)).catch(() => undefined);
    if (s) now[name] = `${s.size}:${s.mtimeMs}`;
  }
  const multi = ctx.redis.multi().del(seenKey);
  if (Object.keys(now).length > 0) multi.hset(seenKey, now);
  await multi.exec();
  const ready = names.filter((n) => now[n] !== undefined && before[n] === now[n]);
  return { ready, waiting: names.filter((n) => now[n] !== undefined && before[n] !== now[n]) };
}

async function runFile(data: TickData, name: string, ctx: TickContext, log: Logger): Promise<FileSummary> {
  const { redis, keys } = ctx;
  const started = new Date();
  const file = join(data.inbox, name);
  const doneKey = `${keys.bullPrefix}:schedule:${data.name}:done`;
  const outbox = (suffix: string) => join(data.outbox, `${name}.${suffix}`);
  await mkdir(data.outbox, { recursive: true });
  const sha256 = await fileSha256(file);
  const finish = async (summary: Omit<FileSummary, 'file' | 'sha256' | 'startedAt' | 'finishedAt' | 'seconds'>, moveTo?: string): Promise<FileSummary> => {
    const finishedAt = new Date();
    const full: FileSummary = {
      file: name,
      sha256,
      startedAt: started.toISOString(),
      finishedAt: finishedAt.toISOString(),
      seconds: Math.round((finishedAt.getTime() - started.getTime()) / 100) / 10,
      ...summary,
    };
    await writeFile(outbox('summary.json'), `${JSON.stringify(full, null, 2)}\n`);
    if (moveTo) await moveAside(file, join(data.inbox, moveTo), name);
    log.info({ summary: full }, describe(full));
    if (data.notifyUrl) await notify(data.notifyUrl, full, log);
    return full;
  };

  const earlier = await redis.hget(doneKey, sha256);
  if (earlier) {
    return finish({ status: 'duplicate', exitStatus: 0, earlier: JSON.parse(earlier) as FileSummary['earlier'] }, 'processed');
  }

  let batch: string | undefined;
  try {
    const profile = await loadProfile(data.profile);
    batch = defaultBatchId(file, await inputFingerprint(file, {}));
    const load = await loadBatch({ file, batch, profile, redis, keys, logger: log, rejects: outbox(`rejects${extname(name) || '.csv'}`) });
    const queue = openQueue(redis, keys);
    let stopped: string | undefined;
    try {
      stopped = await waitForBatch({ redis, keys, queue, batch, total: load.read, ...(ctx.signal ? { signal: ctx.signal } : {}), ...(ctx.pollMs ? { pollMs: ctx.pollMs } : {}) });
    } finally {
      await queue.close();
    }
    const results = await writeResults({ redis, keys, batch, total: load.read, out: outbox('results.csv') });
    // The attention file reads the input again: before it moves.
    const attention = await writeAttention({ redis, keys, batch, out: outbox('attention.csv') });
    const outcomes = Object.fromEntries(Object.entries(results.counts).filter(([, n]) => n > 0));
    if (stopped) {
      // Left in the inbox: the next tick resumes the same batch.
      return finish({ status: 'stopped', batch, rows: load.read, outcomes, exitStatus: 1, results: results.file, attention: attention.file, error: `stopped before every row finished (${stopped})` });
    }
    await redis.hset(doneKey, sha256, JSON.stringify({ file: name, batch, at: new Date().toISOString() }));
    return finish({ status: 'done', batch, rows: load.read, outcomes, exitStatus: exitCodeFor(results.counts), results: results.file, attention: attention.file }, 'processed');
  } catch (err) {
    if (!(err instanceof RealtyBatchError)) throw err;
    // A file that cannot be run as it is (unreadable, a bad profile): set aside, said loudly.
    return finish({ status: 'failed', exitStatus: 1, error: err.message, ...(batch ? { batch } : {}) }, 'failed');
  }
}

/** Moves the input aside, never over an earlier file of the same name. */
async function moveAside(file: string, dir: string, name: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const target = join(dir, name);
  const exists = await stat(target).then(
    () => true,
    () => false,
  );
  const ext = extname(name);
  await rename(file, exists ? join(dir, `${basename(name, ext)}.${new Date().toISOString().replace(/[:.]/g, '-')}${ext}`) : target);
}

/** The one human-readable line of a run. */
export function describe(s: FileSummary): string {
  if (s.status === 'duplicate') return `${s.file}: the same content ran before as ${s.earlier?.file} (batch ${s.earlier?.batch}); not run again`;
  if (s.status === 'failed') return `${s.file}: not run: ${s.error}`;
  const counts = Object.entries(s.outcomes ?? {})
    .map(([o, n]) => `${o} ${n}`)
    .join(', ');
  const submitted = Object.entries(s.outcomes ?? {})
    .filter(([o]) => SUBMITTED_OUTCOMES.has(o as Outcome))
    .reduce((sum, [, n]) => sum + n, 0);
  return `${s.file} → batch ${s.batch}: ${s.rows} rows, ${submitted} submitted (${counts}), exit ${s.exitStatus}, ${s.seconds} s${s.status === 'stopped' ? `; ${s.error}` : ''}`;
}
