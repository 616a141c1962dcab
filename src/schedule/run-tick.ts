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
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import type { RedisClient as Redis } from '../queue/connection.js';
import { RealtyBatchError } from '../errors.js';
import { writeFileAtomically } from '../files/atomic-file.js';
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
import { describeMissing, findMissingRows } from '../batch/missing-rows.js';
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
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
/** A file untouched this long is complete, even the first time a tick sees it. */
const SETTLED_MS = 60_000;
/** A file seen for the first time is looked at again after this long, in the same tick. */
const RECHECK_MS = 2000;

/**
 * The lock, the files seen and the files done belong to the inbox (its resolved
 * path), not to the schedule's name: two schedules on one inbox share them.
 */
export function inboxKey(keys: Keys, inbox: string, what: 'lock' | 'seen' | 'done'): string {
  return `${keys.bullPrefix}:schedule:${createHash('sha256').update(resolve(inbox)).digest('hex').slice(0, 16)}:${what}`;
}
/** Names a person or a program leaves while writing: never inputs. */
const TEMPORARY = /^\.|^~\$|\.(part|tmp|crdownload|partial)$/i;

export async function runTick(data: TickData, ctx: TickContext): Promise<TickResult> {
  const { redis, keys, logger } = ctx;
  const log = logger.child({ schedule: data.name });
  const lockKey = inboxKey(keys, data.inbox, 'lock');
  const token = randomUUID();
  if ((await redis.set(lockKey, token, 'PX', LOCK_MS, 'NX')) !== 'OK') {
    log.info('the previous tick of this schedule is still running; this one returns');
    return { skipped: 'previous tick still running', waiting: [], files: [] };
  }
  // The lock is renewed only while it is still ours; a tick that lost it stops
  // waiting and lets the tick that holds it finish the files.
  const lost = new AbortController();
  const renew = setInterval(() => {
    redis
      .eval(RENEW, 1, lockKey, token, String(LOCK_MS))
      .then((ok) => {
        if (ok !== 1 && !lost.signal.aborted) {
          log.error('this tick lost its lock (a long stall, or a Redis failover); it stops, the file stays in the inbox');
          lost.abort();
        }
      })
      .catch(() => undefined);
  }, LOCK_MS / 3);
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, lost.signal]) : lost.signal;
  try {
    const { ready, waiting } = await readyFiles(data, ctx);
    for (const name of waiting) log.info({ file: name }, 'still being written; it waits for the next tick');
    const files: FileSummary[] = [];
    for (const name of ready) {
      if (signal.aborted) break;
      files.push(await runFile(data, name, { ...ctx, signal }, log));
    }
    return { waiting, files };
  } finally {
    clearInterval(renew);
    await redis.eval(RELEASE, 1, lockKey, token).catch(() => undefined);
  }
}

/**
 * Regular files of the inbox that are complete: unchanged since the previous tick,
 * untouched for a minute, or unchanged over a short second look in this tick (so
 * a file dropped hours before a nightly tick runs that night, not the next one).
 */
async function readyFiles(data: TickData, ctx: TickContext): Promise<{ ready: string[]; waiting: string[] }> {
  const seenKey = inboxKey(ctx.keys, data.inbox, 'seen');
  const look = async (): Promise<Record<string, { sig: string; mtimeMs: number }>> => {
    const entries = await readdir(data.inbox, { withFileTypes: true });
    const found: Record<string, { sig: string; mtimeMs: number }> = {};
    for (const e of entries) {
      if (!e.isFile() || TEMPORARY.test(e.name)) continue;
      const s = await stat(join(data.inbox, e.name)).catch(() => undefined);
      if (s) found[e.name] = { sig: `${s.size}:${s.mtimeMs}`, mtimeMs: s.mtimeMs };
    }
    return found;
  };
  // name → `<size>:<mtime>|<when it was seen so>`: unchanged for RECHECK_MS at least is settled.
  const seen = new Map(Object.entries(await ctx.redis.hgetall(seenKey)).map(([n, v]) => [n, { sig: v.split('|')[0], at: Number(v.split('|')[1] ?? 0) }]));
  let now = await look();
  let lookedAt = Date.now();
  const settled = (name: string): boolean => {
    const was = seen.get(name);
    return (was?.sig === now[name]!.sig && lookedAt - was.at >= RECHECK_MS) || lookedAt - now[name]!.mtimeMs > SETTLED_MS;
  };
  if (Object.keys(now).some((name) => !settled(name))) {
    const first = now;
    const firstAt = lookedAt;
    await new Promise((resolve) => setTimeout(resolve, RECHECK_MS));
    now = await look();
    lookedAt = Date.now();
    for (const name of Object.keys(now)) {
      if (first[name]?.sig === now[name]!.sig && !(seen.get(name)?.sig === now[name]!.sig)) seen.set(name, { sig: now[name]!.sig, at: firstAt });
    }
  }
  // Remember each file as it is now, with when it was first seen so.
  const record = Object.fromEntries(
    Object.entries(now).map(([n, v]) => {
      const was = seen.get(n);
      return [n, `${v.sig}|${was?.sig === v.sig ? was.at : lookedAt}`];
    }),
  );
  const multi = ctx.redis.multi().del(seenKey);
  if (Object.keys(record).length > 0) multi.hset(seenKey, record);
  await multi.exec();
  const names = Object.keys(now).sort();
  return { ready: names.filter(settled), waiting: names.filter((n) => !settled(n)) };
}

async function runFile(data: TickData, name: string, ctx: TickContext, log: Logger): Promise<FileSummary> {
  const { redis, keys } = ctx;
  const started = new Date();
  const file = join(data.inbox, name);
  const doneKey = inboxKey(keys, data.inbox, 'done');
  const outbox = (suffix: string) => join(data.outbox, `${name}.${suffix}`);
  await mkdir(data.outbox, { recursive: true });
  const sha256 = await fileSha256(file);
  const finish = async (
    summary: Omit<FileSummary, 'file' | 'sha256' | 'startedAt' | 'finishedAt' | 'seconds'>,
    moveTo?: string,
  ): Promise<FileSummary> => {
    const finishedAt = new Date();
    const full: FileSummary = {
      file: name,
      sha256,
      startedAt: started.toISOString(),
      finishedAt: finishedAt.toISOString(),
      seconds: Math.round((finishedAt.getTime() - started.getTime()) / 100) / 10,
      ...summary,
    };
    // A duplicate never overwrites the summary of the run it repeats.
    const summaryFile = full.status === 'duplicate' && (await exists(outbox('summary.json'))) ? outbox(`${finishedAt.toISOString().replace(/[:.]/g, '-')}.summary.json`) : outbox('summary.json');
    await writeFileAtomically(summaryFile, `${JSON.stringify(full, null, 2)}\n`);
    if (moveTo) await moveAside(file, join(data.inbox, moveTo), name);
    // Only now is the file done: a tick that dies before this runs it again (same batch).
    if (full.status === 'done') await redis.hset(doneKey, sha256, JSON.stringify({ file: name, batch: full.batch, at: full.finishedAt }));
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
      const why = stopped === 'missing' ? describeMissing(batch, await findMissingRows(redis, keys, batch, load.read)) : stopped;
      return finish({ status: 'stopped', batch, rows: load.read, outcomes, exitStatus: 1, results: results.file, attention: attention.file, error: `stopped before every row finished (${why})` });
    }
    return finish({ status: 'done', batch, rows: load.read, outcomes, exitStatus: exitCodeFor(results.counts), results: results.file, attention: attention.file }, 'processed');
  } catch (err) {
    if (!(err instanceof RealtyBatchError)) throw err;
    // A file that cannot be run as it is (unreadable, a bad profile): set aside, said loudly.
    return finish({ status: 'failed', exitStatus: 1, error: err.message, ...(batch ? { batch } : {}) }, 'failed');
  }
}

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Moves the input aside, never over an earlier file of the same name. */
async function moveAside(file: string, dir: string, name: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const target = join(dir, name);
  const ext = extname(name);
  await rename(file, (await exists(target)) ? join(dir, `${basename(name, ext)}.${new Date().toISOString().replace(/[:.]/g, '-')}${ext}`) : target);
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
