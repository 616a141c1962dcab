/**
 * The load's enqueue step: a chunk of valid deals becomes jobs (one `addBulk`),
 * their rows enter the batch's row index and the chunk's invalid rows get their
 * outcomes, in one round trip. Before it, one read of the ledger: a deal that
 * reached the registry gets its outcome here, without a job or a gateway call:
 * `already_submitted` when another row or batch made its docflow for the same property,
 * `invalid` (DEAL_ID_CONFLICT) when it made it for another cadastral number, the row's own
 * outcome again when this very row did (its batch expired and was loaded again).
 * One chunk is in Redis while the loader reads and validates the next: Redis runs
 * BullMQ's scripts on its own core meanwhile, and the rows held stay two chunks.
 * Redis itself is behind a job store (load-context.ts, redis-load-context.ts).
 */
import type { Queue } from 'bullmq';
import { LOADER } from '../config.js';
import { LeftoverJobsHeldError } from '../errors.js';
import { compareProperties, propertyKeyOf, storedProperty } from '../input/property-key.js';
import { dealIdConflict } from '../outcomes/deal-conflict.js';
import { alreadySubmitted, ownDocflow, type OutcomeRecord } from '../domain/outcome.js';
import type { DocflowType } from '../domain/gateway.js';
import { dealOf, type DealJobData, type StoredJobData } from '../queue/job-data.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Database } from '../db/database.js';
import type { Keys } from '../redis/keys.js';
import type { JobStore, LedgerDeal } from './load-context.js';
import { createRedisJobStore } from './redis-load-context.js';

/** Jobs per `addBulk` (src/config.ts, `LOADER.chunkRows`). */
export const LOAD_CHUNK_SIZE = LOADER.chunkRows;

export interface EnqueueChunk {
  jobs: DealJobData[];
  invalid: OutcomeRecord[];
}

export interface ChunkOptions {
  batch: string;
  /** The bank (its profile's INN): the ledger is kept per bank. */
  bank: string;
  /** The rows' docflow type: the ledger is kept per type too. */
  type?: DocflowType;
  /**
   * True when the batch starts afresh (new, failed, or expired): a job of it found
   * in Redis is a leftover of an earlier life of the batch id (its row index expired
   * before BullMQ removed it) and is made again, or its row would never run. False (a
   * load resumed after a crash): a job found is this batch's, counted `alreadyEnqueued`.
   */
  fresh: boolean;
  /** `--resubmit`: a deal another row made is sent again (a row's own docflow still stands). */
  resubmit?: boolean;
  /** Tells other processes this load is alive; called at most once a second (`LOADER.heartbeatEveryMs`). */
  heartbeat: () => Promise<void>;
}

export interface EnqueueOptions extends ChunkOptions {
  redis: Redis;
  keys: Keys;
  /** Opened on `redis` itself (see `openQueue`): its commands then follow ours on one connection, in order. */
  queue: Queue<StoredJobData>;
  /** The ledger's database. */
  db: Database;
}

export interface Enqueuer {
  /**
   * Sends a chunk once the previous one is in Redis, and returns without waiting
   * for this one; a failure of a chunk is thrown by the next `add` or by `drain`.
   */
  add(chunk: EnqueueChunk): Promise<void>;
  /** Waits for the chunk in flight; throws its failure. */
  drain(): Promise<void>;
  /** Waits for the chunk in flight, ignoring its failure (before taking a failed load back). */
  settle(): Promise<void>;
  readonly enqueued: number;
  readonly alreadyEnqueued: number;
  /** Rows whose deal the ledger has a docflow for: recorded, not enqueued. */
  readonly alreadySubmitted: number;
  /** Valid rows whose dealId the ledger has for another property: recorded invalid (DEAL_ID_CONFLICT), not enqueued. */
  readonly conflicts: number;
}

/** The enqueue step over Redis itself (as the bench measures it). */
export function createEnqueuer(options: EnqueueOptions): Enqueuer {
  return enqueueInto(createRedisJobStore(options.redis, options.keys, options.queue, options.db), options);
}

/** How a chunk is written: a batch loaded again keeps its rows' outcomes; the type labels the outcome counters. */
function writeOptions(fresh: boolean, type: DocflowType | undefined): { skipFinished?: boolean; type?: DocflowType } {
  return { ...(!fresh && { skipFinished: true }), ...(type && { type }) };
}

/** The enqueue step over a load context's job store (load-context.ts). */
export function enqueueInto(store: JobStore, options: ChunkOptions): Enqueuer {
  const { batch, fresh } = options;
  let inFlight: Promise<void> = Promise.resolve();
  let lastHeartbeat = 0;
  let enqueued = 0;
  let alreadyEnqueued = 0;
  let alreadySubmittedRows = 0;
  let dealIdConflicts = 0;

  /**
   * The ledger's docflows for a chunk's deals, asked as soon as the chunk is read: the
   * answer comes in behind the previous chunk's, so sending this one waits for no extra
   * round trip. Only on a fresh batch, whose rows have no outcomes yet: a batch loaded
   * again keeps the outcomes its rows have (the write makes no job for such a row: its
   * finished job is gone), and a row of it still without one is sorted out by its worker.
   */
  const readLedger = (chunk: DealJobData[]): Promise<Array<LedgerDeal | undefined>> | undefined => {
    if (!fresh || chunk.length === 0) return undefined;
    const entries = store.submittedDeals(
      options.bank,
      chunk.map((j) => j.key ?? j.dealId),
      options.type,
    );
    // Awaited by send; a failure before then must not count as unhandled.
    entries.catch(() => undefined);
    return entries;
  };

  /** The chunk's deals the ledger has a docflow for, as outcomes; the rest stay jobs. */
  const sortOutSubmitted = async (chunk: DealJobData[], ledger: Promise<Array<LedgerDeal | undefined>> | undefined) =>
    sortOut(chunk, ledger ? await ledger : [], batch, options.resubmit);

  const send = async (chunk: EnqueueChunk, ledger: Promise<Array<LedgerDeal | undefined>> | undefined): Promise<void> => {
    const { jobs, submitted, conflicts } = await sortOutSubmitted(chunk.jobs, ledger);
    const outcomes = submitted.length + conflicts.length > 0 ? [...chunk.invalid, ...submitted, ...conflicts] : chunk.invalid;
    const now = Date.now();
    const beat = now - lastHeartbeat >= LOADER.heartbeatEveryMs ? options.heartbeat() : undefined;
    if (beat) lastHeartbeat = now;
    // A batch loaded again: rows that have their outcome stay as they are, and count as enqueued before.
    const [existed] = await Promise.all([store.write(batch, jobs, outcomes, writeOptions(fresh, options.type)), beat]);
    const existing = jobs.filter((_, i) => existed[i]);
    if (fresh && existing.length > 0) await remake(existing);
    const already = fresh ? 0 : existing.length;
    alreadyEnqueued += already;
    enqueued += jobs.length - already;
    alreadySubmittedRows += submitted.length;
    dealIdConflicts += conflicts.length;
  };

  /** Replaces leftover jobs of an earlier life of the batch id (the write kept them as they were). */
  const remake = async (stale: DealJobData[]): Promise<void> => {
    const { held } = await store.remove(
      batch,
      stale.map((j) => j.dealId),
    );
    if (held > 0) throw new LeftoverJobsHeldError(batch, held);
    await store.add(batch, stale);
  };

  return {
    async add(chunk) {
      const ledger = readLedger(chunk.jobs);
      await inFlight;
      if (chunk.jobs.length === 0 && chunk.invalid.length === 0) return;
      inFlight = send(chunk, ledger);
      // Seen by the next add or by drain; until then it must not count as unhandled.
      inFlight.catch(() => undefined);
    },
    drain: () => inFlight,
    settle: () => inFlight.catch(() => undefined),
    get enqueued() {
      return enqueued;
    },
    get alreadyEnqueued() {
      return alreadyEnqueued;
    },
    get alreadySubmitted() {
      return alreadySubmittedRows;
    },
    get conflicts() {
      return dealIdConflicts;
    },
  };
}

/**
 * The chunk's deals that have a docflow, as outcomes: the row's own again, or
 * already_submitted (unless --resubmit sends them again); the rest stay jobs.
 */
function sortOut(
  chunk: DealJobData[],
  entries: ReadonlyArray<LedgerDeal | undefined>,
  batch: string,
  resubmit: boolean | undefined,
): { jobs: DealJobData[]; submitted: OutcomeRecord[]; conflicts: OutcomeRecord[] } {
  if (entries.every((e) => e === undefined)) return { jobs: chunk, submitted: [], conflicts: [] };
  const jobs: DealJobData[] = [];
  const submitted: OutcomeRecord[] = [];
  const conflicts: OutcomeRecord[] = [];
  chunk.forEach((job, i) => {
    const deal = entries[i];
    // A docflow the feed found with no row to hold it: the worker's claim gives it to this row.
    if (deal?.batch === '') jobs.push(job);
    else if (deal) {
      const property = propertyKeyOf(dealOf(job) ?? {});
      // An entry that keeps no property (the feed's, or an import's without it) is taken for the same deal.
      const same = deal.property ? compareProperties(deal.property, storedProperty(property)) : 'same';
      // Another cadastral number: another deal under this dealId, refused, --resubmit or not; also on
      // the row that made the docflow (its batch expired, and its id was loaded again with another file).
      if (same === 'different') conflicts.push(dealIdConflict(job.row, job.dealId, deal, deal.property!, property, 0));
      else if (deal.batch === batch && deal.row === job.row) {
        // The row made it: its outcome again (addresses written differently: the worker's claim tells).
        if (same === 'same') submitted.push(ownDocflow(job.row, job.dealId, deal, deal.via, 0));
        else jobs.push(job);
      }
      // Addresses written differently, a cadastral number on one side only: the worker finds
      // the row's cadastral number (suggest) and its claim tells, before anything is sent.
      else if (same === 'unknown' || resubmit) jobs.push(job);
      else submitted.push(alreadySubmitted(job.row, job.dealId, deal, 0));
    } else jobs.push(job);
  });
  return { jobs, submitted, conflicts };
}
