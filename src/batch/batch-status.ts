/**
 * A batch at a glance: counts per outcome, where its unfinished rows are in the
 * queue, when it started and finished, and how fast it went.
 */
import { DEFAULT_KIND } from '../docflows/registry.js';
import type { DocflowType } from '../domain/gateway.js';
import { DUPLICATE_CODE } from '../db/duplicates.js';
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import { createBatchStore, noSuchBatch, type BatchState } from './batch-store.js';
import type { Outcome } from '../domain/outcome.js';
import { dealJobId } from '../queue/job-data.js';
import type { Keys } from '../redis/keys.js';
import { batchOutcomes } from '../outcomes/batch-outcomes.js';
import { emptyCounts } from '../domain/outcome.js';
import { findMissingRows } from './missing-rows.js';
import { findWaitingRows, type WaitingRow } from './waiting-rows.js';
import { createStateTally } from '../outcomes/state-tally.js';
import type { Requirement } from '../domain/outcome.js';

export interface BatchStatus {
  batch: string;
  /** The docflow type its rows file (the gateway's name: `encumbrance_request`, `cessation_encumbrance_request` ...). */
  type: DocflowType;
  total: number;
  /** Outcome → rows, only outcomes that occur (`pending`: not finished yet). */
  outcomes: Partial<Record<Outcome, number>>;
  /** Every row has its outcome. */
  done: boolean;
  /** Every row is final besides: its docflow completed or refused by the registry, or the row refused before sending. */
  registered: boolean;
  /** Submitted rows per docflow state, as the news feed last showed it (`unknown`: not shown yet). */
  states: Record<string, number>;
  /** Suspended rows per requirement: what the bank has to do. */
  waitingFor: Partial<Record<Requirement, number>>;
  /** The oldest row not final yet, and since when (its outcome's time). */
  oldestUnfinished?: { row: number; since: string };
  /** The batch's load: loading, loaded or failed (and whether its loader died). */
  state: BatchState;
  loaderDied?: boolean;
  file: string;
  /** Unfinished rows by BullMQ job state (waiting, delayed, active, failed, missing ...). */
  queue: Record<string, number>;
  /** Rows with neither a job nor an outcome: nothing will finish them (`retry --missing` makes them again). */
  missing: number;
  /** The first of them, for the message. */
  missingRows?: number[];
  /**
   * Redis no longer holds the batch's bank profile (emptied, restarted) while rows are unfinished:
   * the path it was loaded from ('' when unknown), for `retry --missing --profile`.
   */
  profileLost?: string;
  /**
   * Rows waiting for their next try (BullMQ's delayed set), while rows are pending: how many,
   * the earliest next try, and the first `waitingRows` by next try, each with why it waits.
   */
  waiting?: { count: number; nextTryAt?: string; rows: WaitingRow[] };
  startedAt: string;
  finishedAt?: string;
  /** Rows finished per second over the time the batch has been running: from the load's end to the last outcome, or to now while unfinished. */
  rowsPerSecond?: number;
  /** Rows whose deal has two docflows at the gateway (DUPLICATE_DOCFLOW), each with both docflows: they need a person. */
  duplicates: Array<{ row: number; dealId: string; docflowId: string; otherDocflowId: string }>;
}

/** Job states looked up one by one: past this many unfinished rows, a sample. */
const MAX_STATES = 10_000;
/** Waiting rows given with their reasons (`status --json`); `count` says how many there are. */
export const WAITING_ROWS = 1000;

export interface BatchStatusOptions {
  /** Waiting rows to give with their reasons (each is one read of its job); 0 gives the count alone. */
  waitingRows?: number;
}

export async function batchStatus(
  redis: Redis,
  keys: Keys,
  db: Database,
  batch: string,
  options: BatchStatusOptions = {},
): Promise<BatchStatus> {
  const meta = await createBatchStore(redis, keys, db).get(batch);
  if (!meta) throw noSuchBatch(redis, keys, batch);
  const total = meta.total ?? 0;
  const { counts, unfinished, last, tally, duplicates } = await readRows(redis, keys, db, batch, total);
  const states = await jobStates(redis, keys, batch, unfinished);
  const done = meta.state === 'loaded' && counts.pending === 0;
  const began = Date.parse(meta.loadedAt ?? meta.createdAt);
  const finishedRows = total - counts.pending;
  const registry = tally.result(done);
  const status: BatchStatus = {
    batch,
    type: (meta.type || DEFAULT_KIND.type) as DocflowType,
    total,
    outcomes: Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0)),
    done,
    registered: registry.registered,
    states: registry.states,
    waitingFor: registry.waitingFor,
    ...(registry.oldestUnfinished && { oldestUnfinished: registry.oldestUnfinished }),
    state: meta.state,
    file: meta.file,
    queue: states,
    missing: 0,
    startedAt: meta.createdAt,
    duplicates,
  };
  if (counts.pending > 0) Object.assign(status, await unfinishedRows(redis, keys, db, meta, options.waitingRows ?? 0));
  if (meta.loaderDied) status.loaderDied = true;
  if (done && last > 0) status.finishedAt = new Date(last).toISOString();
  // A batch still running has been running until now, not until its last outcome.
  const rate = pace(finishedRows, began, done ? last : Date.now());
  if (rate !== undefined) status.rowsPerSecond = rate;
  return status;
}

/** One pass over the batch's rows: counts, the unfinished rows' dealIds, the last outcome's time, states and duplicates. */
async function readRows(redis: Redis, keys: Keys, db: Database, batch: string, total: number) {
  const counts = emptyCounts();
  const unfinished: string[] = [];
  let last = 0;
  const tally = createStateTally();
  const duplicates: BatchStatus['duplicates'] = [];
  for await (const r of batchOutcomes(redis, keys, db, batch, total, { states: true })) {
    counts[r.outcome]++;
    tally.add(r);
    if (r.errorCode === DUPLICATE_CODE)
      duplicates.push({ row: r.row, dealId: r.dealId, docflowId: r.docflowId ?? '', otherDocflowId: r.otherDocflowId ?? '' });
    if (r.outcome === 'pending') {
      if (unfinished.length < MAX_STATES && r.dealId) unfinished.push(r.dealId);
    } else if (r.finishedAt) last = Math.max(last, Date.parse(r.finishedAt));
  }
  return { counts, unfinished, last, tally, duplicates };
}

/** The rows without an outcome: those waiting for their next try, and those with no job either (`missing`). */
async function unfinishedRows(
  redis: Redis,
  keys: Keys,
  db: Database,
  meta: { id: string; state: BatchState; total?: number; profilePath?: string },
  waitingRows: number,
): Promise<Pick<BatchStatus, 'waiting' | 'missing' | 'missingRows' | 'profileLost'>> {
  const found: Pick<BatchStatus, 'waiting' | 'missing' | 'missingRows' | 'profileLost'> = {
    waiting: await waitingOf(redis, keys, meta.id, waitingRows),
    missing: 0,
  };
  // Only a loaded batch: one still loading has rows whose jobs are not made yet.
  if (meta.state === 'loaded') {
    const missing = await findMissingRows(redis, keys, db, meta.id, meta.total ?? 0);
    found.missing = missing.count;
    if (missing.count > 0) found.missingRows = missing.rows;
    // Their profile gone with Redis: `retry --missing` needs it given again.
    if (!(await createBatchStore(redis, keys, db).profile(meta.id))) found.profileLost = meta.profilePath ?? '';
  }
  return found;
}

/** Rows finished per second from `began` to `end` (ms), one decimal; none before a row or a moment. */
function pace(rows: number, began: number, end: number): number | undefined {
  return end > began && rows > 0 ? Math.round((rows / ((end - began) / 1000)) * 10) / 10 : undefined;
}

async function waitingOf(redis: Redis, keys: Keys, batch: string, limit: number): Promise<NonNullable<BatchStatus['waiting']>> {
  const waiting = await findWaitingRows(redis, keys, batch, limit);
  return {
    count: waiting.count,
    ...(waiting.nextAt !== undefined && { nextTryAt: new Date(waiting.nextAt).toISOString() }),
    rows: waiting.rows,
  };
}

/**
 * How many of the unfinished rows' jobs are in each BullMQ state (`missing`: no job). BullMQ is
 * imported here, not at the top: `status` of a finished batch never asks, and starts without it.
 */
async function jobStates(redis: Redis, keys: Keys, batch: string, dealIds: readonly string[]): Promise<Record<string, number>> {
  const { openQueue } = await import('../queue/deal-queue.js');
  const queue = openQueue(redis, keys);
  const states: Record<string, number> = {};
  try {
    for (let i = 0; i < dealIds.length; i += 200) {
      const chunk = await Promise.all(dealIds.slice(i, i + 200).map((dealId) => queue.getJobState(dealJobId(batch, dealId))));
      for (const s of chunk) {
        const state = s === 'unknown' ? 'missing' : s;
        states[state] = (states[state] ?? 0) + 1;
      }
    }
  } finally {
    await queue.close();
  }
  return states;
}
