/**
 * One input of a tick, run as its own batch. The file is taken as it is when the
 * tick reads it (its size and sha256); it must still be that when its batch
 * ends: a file that changed in between (still being copied) is not done. Its
 * batch is abandoned (marked failed, its jobs removed: nothing more of it is
 * sent), nothing is moved, and a later tick takes it again, whole, under a new
 * batch id (the content changed, so its fingerprint did). Rows the abandoned
 * batch did send are kept by the ledger: in the new batch they are
 * `already_submitted`, never sent twice.
 *
 * Any error of one file is that file's `failed` summary; only Redis going away
 * stops the tick (the files stay in the inbox for the next one).
 */
import { lstat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import { isRedisOutage } from '../redis/connection.js';
import { RealtyBatchError, RedisUnavailableError } from '../errors.js';
import { reasonOf, writeFileAtomically } from '../files/atomic-file.js';
import { loadProfile } from '../input/profile.js';
import type { Logger } from '../logger.js';
import { createBatchStore } from '../batch/batch-store.js';
import type { Keys } from '../redis/keys.js';
import { loadBatch, removeBatchJobs } from '../batch/load-batch.js';
import { openQueue } from '../queue/deal-queue.js';
import { defaultBatchId } from '../batch/batch-id.js';
import { TUNABLES } from '../config.js';
import { FEED_SHOW_WAIT_MS } from '../batch/feed-shown.js';
import { describeMissing } from '../batch/missing-rows.js';
import { runLoadedBatch, type LoadedBatchResult, type WrittenAttention } from '../pipeline/run-loaded-batch.js';
import { describe, type FileSummary } from './file-summary.js';
import { DEFAULT_DONE_MS, inboxKey, MAX_LOADS_BEGUN, SEEN_MS } from './inbox-keys.js';
import { findDone, rememberDone } from './inbox-memory.js';
import { notify } from './notify.js';
import {
  moveAside,
  outputRefusal,
  publish,
  removeMarker,
  snapshot,
  syncFolder,
  unchanged,
  watchUnchanged,
  withStaging,
  type Aside,
  type Snapshot,
} from './safe-files.js';
import type { TickData } from './scheduler.js';
import { loadMapping } from '../input/mapping.js';
import { kindOf, readingColumns, type DocflowKind } from '../docflows/registry.js';
import { parseEncodingFlag } from '../input/decode.js';
import { parseFormatFlag, type InputOptions } from '../input/open-input.js';

export interface TickContext {
  redis: Redis;
  keys: Keys;
  /** The system of record: the ledger and the docflows' states. */
  db: Database;
  logger: Logger;
  /** Stops waiting for a batch (the worker is shutting down); the file stays in the inbox. */
  signal?: AbortSignal;
  pollMs?: number;
  /** The tick's deadline (ms since the epoch): a batch unfinished then is written with its rows pending, exit 3. */
  deadline?: number;
  /** The worker's `--feed-lag-ms` (its resolved settings): how long a docflow may take to show in the feed. */
  feedLagMs?: number;
}

type Outcome = Omit<FileSummary, 'file' | 'sha256' | 'startedAt' | 'finishedAt' | 'seconds'>;

/** The file's summary; undefined when it was gone before its turn came (moved or deleted by someone). */
export async function runFile(data: TickData, name: string, ctx: TickContext, log: Logger): Promise<FileSummary | undefined> {
  return new FileRun(data, name, ctx, log).run();
}

type LoadSummary = Awaited<ReturnType<typeof loadBatch>>;
type BatchEnd = LoadedBatchResult & { attention: WrittenAttention };

/** One file's run, its state as fields: what was taken, its batch, and whether the input left the inbox. */
class FileRun {
  private readonly started = new Date();
  private readonly file: string;
  private readonly rejectsName: string;
  private taken: Snapshot | undefined;
  private batch: string | undefined;
  /** Set once the input left the inbox: an error after that is not the file's own. */
  private moved = false;

  constructor(
    private readonly data: TickData,
    private readonly name: string,
    private readonly ctx: TickContext,
    private readonly log: Logger,
  ) {
    this.file = join(data.inbox, name);
    this.rejectsName = `rejects${extname(name) || '.csv'}`;
  }

  async run(): Promise<FileSummary | undefined> {
    if (!(await lstat(this.file).catch(() => undefined))) {
      this.log.info({ file: this.name }, 'gone from the inbox before its turn; nothing to run');
      return undefined;
    }
    try {
      const taken = (this.taken = await snapshot(this.file));
      const earlier = await findDone(this.ctx.db, this.data.inbox, taken.sha256);
      if (earlier) return await this.finish({ status: 'duplicate', exitStatus: 0, earlier }, 'processed');
      const refused = await this.outputsRefused();
      if (refused) return refused;
      const profile = await loadProfile(this.data.profile);
      const id = (this.batch = defaultBatchId(this.file, taken.sha256));
      const setAside = await this.countLoadBegun(taken, id);
      if (setAside) return setAside;
      return await withStaging(this.data.outbox, (stage) => this.loadAndRun(stage, profile, taken, id));
    } catch (err) {
      return this.failed(err);
    }
  }

  /** A name in the outbox, in the outbox folder. */
  private out(suffix: string): string {
    return join(this.data.outbox, `${this.name}.${suffix}`);
  }

  /** Checked before anything is loaded: nothing is sent for a file whose results could not be delivered. */
  private async outputsRefused(): Promise<FileSummary | undefined> {
    for (const suffix of ['results.csv', 'attention.csv', this.rejectsName, 'summary.json']) {
      const refusal = await outputRefusal(this.out(suffix));
      if (refusal) {
        this.log.error(
          { file: this.out(suffix) },
          'an output name in the outbox is a symbolic link or not a regular file: nothing is written through it, the input is not run',
        );
        return this.finish({ status: 'failed', exitStatus: 1, error: refusal }, 'failed');
      }
    }
    return undefined;
  }

  /**
   * A load that stops the process (a crash while reading the file) is counted before it begins:
   * after MAX_LOADS_BEGUN such loads the file is set aside (its summary), and every worker keeps running.
   */
  private async countLoadBegun(snap: Snapshot, id: string): Promise<FileSummary | undefined> {
    const { redis, keys, db } = this.ctx;
    const loading = inboxKey(keys, this.data.inbox, 'loading');
    const begun = Number(
      await redis
        .multi()
        .hincrby(loading, snap.sha256, 1)
        .pexpire(loading, SEEN_MS)
        .exec()
        .then((r) => r?.[0]?.[1]),
    );
    if (begun <= MAX_LOADS_BEGUN) return undefined;
    await redis.hdel(loading, snap.sha256);
    const error = `${this.name} was set aside: loading it stopped the process ${begun - 1} times before the load ended (a crash or a kill while it was read); check the file, and drop it in again to load it once more.`;
    this.log.error({ file: this.name, loads: begun - 1 }, error);
    // A load that died half way may have made the batch (and sent its first rows): named when it did.
    const made = await createBatchStore(redis, keys, db).get(id);
    return this.finish({ status: 'failed', exitStatus: 1, error, ...(made && { batch: id }) }, 'failed');
  }

  /** The file loaded as batch `id`, taken to its end through the one pipeline, its files published from `stage`. */
  private async loadAndRun(
    stage: string,
    profile: Awaited<ReturnType<typeof loadProfile>>,
    snap: Snapshot,
    id: string,
  ): Promise<FileSummary> {
    const { data, ctx, log, file } = this;
    const { redis, keys, db } = ctx;
    const kind = tickKind(data.type);
    const reading = await tickReading(data.reading, kind.columns);
    const loading = inboxKey(keys, data.inbox, 'loading');
    const load = await loadBatch({
      file,
      batch: id,
      profile,
      profileFile: resolve(data.profile),
      redis,
      keys,
      db,
      logger: log,
      // Read with options (or another type's columns), the batch's fingerprint names the content and
      // the options (the load computes it); else the bytes alone.
      ...(reading || kind.columns ? reading : { fingerprint: snap.sha256 }),
      ...kind,
      rejects: join(stage, this.rejectsName),
      lang: data.lang,
      // The schedule's --files-root, as `load --files-root` would take it (kept with the batch for retry).
      ...(data.filesRoot !== undefined && { filesRoot: data.filesRoot }),
    }).finally(() => redis.hdel(loading, snap.sha256));
    // Workers may already be taking its jobs: given up at once, most of it is never sent.
    if (!(await unchanged(file, snap))) return this.changed();
    // The input is watched while its batch runs: changed (by content), renamed or gone, the batch is given up at once.
    const inputChanged = new AbortController();
    const end = await runLoadedBatch({
      redis,
      keys,
      db,
      logger: log,
      batch: id,
      total: load.read,
      open: () => {
        const queue = openQueue(redis, keys);
        const watch = watchUnchanged(file, snap, () => inputChanged.abort());
        return {
          queue,
          close: async () => {
            watch.stop();
            await queue.close();
          },
        };
      },
      signal: ctx.signal ? AbortSignal.any([ctx.signal, inputChanged.signal]) : inputChanged.signal,
      ...(ctx.pollMs ? { pollMs: ctx.pollMs } : {}),
      ...(ctx.deadline !== undefined && { deadline: ctx.deadline }),
      // As `run` does (src/batch/feed-shown.ts): a resend's earlier docflow is in the results, not after them.
      feed: {
        feedLagMs: ctx.feedLagMs ?? TUNABLES.feedLagMs,
        timeoutMs: FEED_SHOW_WAIT_MS,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      },
      goOn: () => !inputChanged.signal.aborted,
      results: { out: join(stage, 'results.csv'), excel: profile.excel },
      attention: { out: join(stage, 'attention.csv') },
      lang: data.lang,
    });
    if (!end) return this.changed();
    // The last look before the file is called done and moves: it must still be what was loaded.
    if (!(await unchanged(file, snap))) return this.changed();
    return this.ended(end, load, id);
  }

  /** The batch's end: its files published to the outbox, and the file done or left for the next tick. */
  private async ended(end: BatchEnd, load: LoadSummary, id: string): Promise<FileSummary> {
    const { stopped, results, attention } = end;
    if (load.rejectsFile) await publish(load.rejectsFile, this.out(this.rejectsName));
    await publish(results.file, this.out('results.csv'));
    await publish(attention.file, this.out('attention.csv'));
    const outcomes = Object.fromEntries(Object.entries(results.counts).filter(([, n]) => n > 0));
    const files = { results: this.out('results.csv'), attention: this.out('attention.csv') };
    if (stopped) {
      // Left in the inbox: the next tick resumes the same batch.
      const why = end.missing
        ? describeMissing(id, end.missing)
        : stopped === 'deadline'
          ? `the schedule's --deadline came; the pending rows' jobs stay in the queue for a running realty-batch work, and the next tick writes this file's results again`
          : stopped;
      return this.finish({
        status: 'stopped',
        batch: id,
        rows: load.read,
        outcomes,
        // The deadline is the schedule's plan: its rows need a next step (3), nothing broke (1): batchExitCode.
        exitStatus: end.exitCode,
        ...files,
        error: `stopped before every row finished (${why})`,
      });
    }
    return this.finish(
      {
        status: 'done',
        batch: id,
        rows: load.read,
        outcomes,
        exitStatus: end.exitCode,
        ...files,
        // Every row has its outcome (done); registered once every docflow is completed or refused, days later.
        registered: results.states.registered,
        states: results.states.states,
      },
      'processed',
    );
  }

  /** Any error of the file is its `failed` summary, but Redis going away (every file would fail so) and errors once it moved. */
  private async failed(err: unknown): Promise<FileSummary> {
    const { name, log, batch } = this;
    if (isRedisOutage(err) || err instanceof RedisUnavailableError || this.moved) throw err;
    // A load that found the file changing while it read it: not a broken file, one still being written.
    if (this.taken && batch && !(await unchanged(this.file, this.taken))) return this.changed();
    const error = err instanceof RealtyBatchError ? err.message : `${name} could not be run (${reasonOf(err)}).`;
    log.error({ file: name, err: { message: error } }, 'this file could not be run; the tick goes on with the others');
    // A file that cannot be run as it is (unreadable, a bad profile, an output refused): set aside, said loudly.
    return this.finish({ status: 'failed', exitStatus: 1, error, ...(batch ? { batch } : {}) }, 'failed');
  }

  /** The file is not what was taken any more: its batch is given up, the file waits for a later tick. */
  private async changed(): Promise<FileSummary> {
    const { name, batch } = this;
    const why = `${name} changed after it was taken (is it still being written?): batch ${batch} was abandoned, nothing more of it is sent, and the file is taken again, whole, once it stops changing`;
    this.log.warn({ file: name, batch }, why);
    if (batch) await abandonBatch(this.ctx, batch, why, this.log);
    return this.finish({ status: 'stopped', exitStatus: 1, error: `${why}.`, ...(batch ? { batch } : {}) });
  }

  /** The summary written (and sent), the input moved aside when it goes, and a done file remembered. */
  private async finish(summary: Outcome, moveTo?: Aside): Promise<FileSummary> {
    const { data, name, log, taken } = this;
    const finishedAt = new Date();
    const full: FileSummary = {
      file: name,
      ...(taken ? { sha256: taken.sha256 } : {}),
      startedAt: this.started.toISOString(),
      finishedAt: finishedAt.toISOString(),
      seconds: Math.round((finishedAt.getTime() - this.started.getTime()) / 100) / 10,
      ...summary,
    };
    await this.writeSummary(full, finishedAt);
    if (moveTo) {
      // The marker first: a file left without its marker by a crash waits, it is never taken half-written.
      await removeMarker(data.inbox, name, data.readySuffix, log);
      this.moved = true;
      await moveAside(data.inbox, name, moveTo, log);
    }
    // Only now is the file done: a tick that dies before this runs it again (same batch).
    if (full.status === 'done' && taken) {
      await rememberDone(
        this.ctx.db,
        data.inbox,
        taken.sha256,
        { file: name, batch: full.batch ?? '', at: full.finishedAt },
        data.doneMs ?? DEFAULT_DONE_MS,
      );
    }
    log.info({ summary: full }, describe(full));
    if (data.notifyUrl) await notify(data.notifyUrl, full, log);
    return full;
  }

  /** A duplicate never overwrites the summary of the run it repeats; a name that is a link is never written through. */
  private async writeSummary(full: FileSummary, finishedAt: Date): Promise<void> {
    const plain = this.out('summary.json');
    const there = await lstat(plain).catch(() => undefined);
    const target =
      there && (!there.isFile() || full.status === 'duplicate')
        ? this.out(`${finishedAt.toISOString().replace(/[:.]/g, '-')}.summary.json`)
        : plain;
    await withStaging(this.data.outbox, async (stage) => {
      await writeFileAtomically(join(stage, 'summary.json'), `${JSON.stringify(full, null, 2)}\n`);
      await publish(join(stage, 'summary.json'), target);
    });
    await syncFolder(this.data.outbox);
  }
}

/** Marks the batch failed (workers send none of its jobs from then on), then removes its jobs. */
async function abandonBatch(ctx: TickContext, batch: string, why: string, log: Logger): Promise<void> {
  const store = createBatchStore(ctx.redis, ctx.keys, ctx.db);
  if (!(await store.get(batch))) return;
  await store.fail(batch, why);
  const queue = openQueue(ctx.redis, ctx.keys);
  try {
    await removeBatchJobs(queue, ctx.redis, ctx.keys, batch);
  } catch (err) {
    // A job a worker holds right now ends on its own: the batch is failed, so it sends nothing more.
    log.warn({ batch, err: { message: (err as Error).message } }, 'some jobs of the abandoned batch could not be removed yet');
  } finally {
    await queue.close();
  }
}

/** The schedule's docflow type as the load takes it (its columns read beside the canonical ones). */
function tickKind(type: string | undefined): { kind?: DocflowKind; columns?: readonly string[] } {
  if (type === undefined) return {};
  const kind = kindOf(type);
  const columns = readingColumns(kind);
  return columns ? { kind, columns } : { kind };
}

/** The schedule's reading flags as the load takes them, its mapping file read now; undefined when it has none. */
async function tickReading(stored: TickData['reading'], typeColumns: readonly string[] = []): Promise<InputOptions | undefined> {
  if (!stored) return undefined;
  const reading: InputOptions = {};
  if (stored.format !== undefined) reading.format = parseFormatFlag(stored.format);
  if (stored.encoding !== undefined) {
    const encoding = parseEncodingFlag(stored.encoding);
    if (encoding !== 'auto') reading.encoding = encoding;
  }
  if (stored.delimiter !== undefined) reading.delimiter = stored.delimiter;
  if (stored.sheet !== undefined) reading.sheet = stored.sheet;
  if (stored.mapping !== undefined) reading.mapping = await loadMapping(stored.mapping, typeColumns);
  return reading;
}
