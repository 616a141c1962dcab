/**
 * One tick of a nightly schedule: the new, complete files of the inbox each run
 * as their own batch (run-file.ts); when a batch is done its results, attention
 * file and summary land in the outbox and the input moves to
 * `<inbox>/.realty/processed/`.
 *
 * Which files are complete: inbox-scan.ts (a ready marker, or a settle time).
 * A file runs once: its sha256 is remembered, and the same content dropped
 * again, under any name, is reported and set aside. One tick at a time per
 * inbox across every host (a lock in Redis with an expiry). No link is followed,
 * in the inbox or the outbox (safe-files.ts). How each tick ended is kept for the
 * dashboard's /metrics (src/redis/schedule-ticks.ts); a tick skipped for the lock is not.
 */
import { mkdir } from 'node:fs/promises';
import { RedisUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isRedisOutage } from '../redis/connection.js';
import { tokenLock } from '../redis/token-lock.js';
import { recordTick, type TickRecord } from '../redis/schedule-ticks.js';
import type { FileSummary, TickResult } from './file-summary.js';
import { inboxKey, LOCK_MS } from './inbox-keys.js';
import { scanInbox } from './inbox-scan.js';
import { runFile, type TickContext } from './run-file.js';
import { ensureToolFolders, removeOldStaging } from './safe-files.js';
import { checkFoldersApart, tickDeadline, type TickData } from './scheduler.js';

export { describe, type FileSummary, type TickResult } from './file-summary.js';
export { inboxKey } from './inbox-keys.js';
export type { TickContext } from './run-file.js';

export async function runTick(data: TickData, ctx: TickContext): Promise<TickResult> {
  const { redis, keys, logger } = ctx;
  const log = logger.child({ schedule: data.name });
  // A schedule registered before `schedule` refused it would take its own outputs as inputs.
  await checkFoldersApart(data.inbox, data.outbox).catch(async (err: unknown) => {
    await noteTick(ctx, log, { name: data.name, endedAt: Date.now(), success: false, files: 0, error: (err as Error).message });
    throw err;
  });
  const lock = tokenLock(redis, inboxKey(keys, data.inbox, 'lock'), LOCK_MS);
  if (!(await lock.acquire())) {
    log.info('the previous tick of this schedule is still running; this one returns');
    return { skipped: 'previous tick still running', waiting: [], files: [] };
  }
  // The lock is renewed only while it is still ours; a tick that lost it stops
  // waiting and lets the tick that holds it finish the files.
  const lost = new AbortController();
  const renew = setInterval(() => {
    lock
      .renew()
      .then((ok) => {
        if (!ok && !lost.signal.aborted) {
          log.error('this tick lost its lock (a long stall, or a Redis failover); it stops, the file stays in the inbox');
          lost.abort();
        }
      })
      .catch(() => undefined);
  }, LOCK_MS / 3);
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, lost.signal]) : lost.signal;
  // The schedule's deadline is reckoned once a tick, from its start: every file of the tick shares it.
  const deadline = data.deadline ? tickDeadline(data.deadline, new Date(), data.tz) : undefined;
  try {
    const { result, unfinished } = await runFiles(data, { ...ctx, signal, ...(deadline !== undefined && { deadline }) }, log);
    // A file that failed, stopped or could not be finished, or a lost lock: the tick did not go well.
    // A file stopped by the schedule's deadline (exit 3) went as planned: its rows wait for a person or a worker.
    const failed = result.files.filter((f) => f.status === 'failed' || (f.status === 'stopped' && f.exitStatus === 1)).length + unfinished;
    const error = lost.signal.aborted ? 'the tick lost its lock' : failed > 0 ? `${failed} file(s) failed or stopped` : undefined;
    await noteTick(ctx, log, {
      name: data.name,
      endedAt: Date.now(),
      success: error === undefined,
      files: result.files.length,
      ...(error ? { error } : {}),
    });
    return result;
  } catch (err) {
    // Redis away cannot take the record either (and would hold the error back until it returns).
    if (!isRedisOutage(err) && !(err instanceof RedisUnavailableError))
      await noteTick(ctx, log, { name: data.name, endedAt: Date.now(), success: false, files: 0, error: (err as Error).message });
    throw err;
  } finally {
    clearInterval(renew);
    await lock.release();
  }
}

/** The tick's end, for the dashboard's /metrics; a Redis that cannot take it costs the figure, not the tick. */
async function noteTick(ctx: TickContext, log: Logger, record: TickRecord): Promise<void> {
  await recordTick(ctx.redis, ctx.keys, record).catch((err: unknown) => {
    log.warn({ err: { message: (err as Error).message } }, "this tick's end could not be recorded for /metrics");
  });
}

/** The files of one tick, under its lock; `unfinished`: files that could not be finished (they stay in the inbox). */
async function runFiles(
  data: TickData,
  ctx: TickContext & { signal: AbortSignal },
  log: Logger,
): Promise<{ result: TickResult; unfinished: number }> {
  const { redis, keys, signal } = ctx;
  await ensureToolFolders(data.inbox);
  await mkdir(data.outbox, { recursive: true });
  await removeOldStaging(data.outbox);
  const files: FileSummary[] = [];
  const handled = new Set<string>();
  let unfinished = 0;
  const runReady = async (names: string[]): Promise<void> => {
    for (const name of names) {
      if (signal.aborted || handled.has(name)) continue;
      handled.add(name);
      try {
        const summary = await runFile(data, name, ctx, log);
        if (summary) files.push(summary);
      } catch (err) {
        // A summary that could not be written, a move that failed, or Redis going away (which stops
        // the tick): the file stays in the inbox for the next tick.
        unfinished++;
        log.error(
          { file: name, err: { message: (err as Error).message } },
          'this file could not be finished; it stays in the inbox for the next tick',
        );
        if (isRedisOutage(err) || err instanceof RedisUnavailableError) throw err;
      }
    }
  };
  let scan = await scanInbox(data, redis, keys, log);
  await runReady(scan.ready);
  // One second look in this tick, once the waiting files would have settled: a file
  // dropped a moment before a nightly tick runs that night, not the next one.
  if (scan.settlesAt !== undefined && !signal.aborted) {
    await sleep(scan.settlesAt - Date.now() + 50, signal);
    if (!signal.aborted) {
      scan = await scanInbox(data, redis, keys, log);
      await runReady(scan.ready);
    }
  }
  const waiting = scan.waiting.filter((n) => !handled.has(n));
  const why = data.readySuffix ? `waits for its ready marker (${data.readySuffix})` : 'still being written; it waits for the next tick';
  for (const name of waiting) log.info({ file: name }, why);
  return { result: { waiting, files }, unfinished };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
