/**
 * Retention of the system of record: a pass that deletes what has outlived its time, in small
 * transactions (SQLite has one connection a process and one writer a file: a worker's claims wait
 * for each, so each is a few milliseconds and the pass yields between them).
 * - the ledger: entries unchanged for `ledgerMs` (REALTY_LEDGER_DAYS, default 1,830: five years),
 *   never one whose try is in flight (`sending`: its answer may still make a docflow);
 * - the docflows the feed followed, with their history, once older than that and no entry of
 *   their deal is left (a deal resubmitted last year keeps its first docflow's history);
 * - batches past their `expires_at` (REALTY_RETENTION_DAYS after their load), with their outcomes.
 * Every delete checks its rows' age again: a row changed since it was picked is left.
 */
import { hostname } from 'node:os';
import type { Logger } from '../logger.js';
import type { Database, Trx } from './database.js';

export const DAY_MS = 24 * 3_600_000;
/** Rows a transaction deletes at most. */
export const PRUNE_BATCH = 500;

export interface PruneOptions {
  /** How long an entry is kept after its last change (ms). */
  ledgerMs: number;
  /** Rows per transaction (PRUNE_BATCH). */
  batchSize?: number;
  /** Count what would go, delete nothing. */
  dryRun?: boolean;
  /** Stops the pass between two transactions. */
  signal?: AbortSignal;
}

export interface PruneCounts {
  ledger: number;
  docflows: number;
  /** docflow_history rows. */
  history: number;
  batches: number;
  outcomes: number;
}

/** Between two transactions: the event loop (and SQLite's one connection) serves the others. */
const yieldNow = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function pruneDatabase(db: Database, options: PruneOptions): Promise<PruneCounts> {
  const size = options.batchSize ?? PRUNE_BATCH;
  const now = await db.now();
  const cutoff = now - options.ledgerMs;
  const counts: PruneCounts = { ledger: 0, docflows: 0, history: 0, batches: 0, outcomes: 0 };
  const stopped = () => options.signal?.aborted === true;
  const hasBatches = await tablesExist(db, ['batches', 'outcomes']);
  if (options.dryRun) return countDue(db, cutoff, now, counts, hasBatches);

  for (let done = size; done === size && !stopped(); await yieldNow()) {
    done = await db.transaction(async (trx) => {
      const keys = await trx
        .selectFrom('ledger')
        .select(['bank', 'type', 'deal_id'])
        .where('updated_at', '<', cutoff)
        .where('state', '<>', 'sending')
        .limit(size)
        .execute();
      if (keys.length === 0) return 0;
      const deleted = await trx
        .deleteFrom('ledger')
        .where((eb) =>
          eb(
            eb.refTuple('bank', 'type', 'deal_id'),
            'in',
            keys.map((k) => eb.tuple(k.bank, k.type, k.deal_id)),
          ),
        )
        .where('updated_at', '<', cutoff)
        .where('state', '<>', 'sending')
        .executeTakeFirst();
      counts.ledger += Number(deleted.numDeletedRows);
      return keys.length;
    });
  }

  for (let done = size; done === size && !stopped(); await yieldNow()) {
    done = await db.transaction(async (trx) => {
      const ids = (await orphanDocflows(trx, cutoff).select('d.docflow_id').limit(size).execute()).map((d) => d.docflow_id);
      if (ids.length === 0) return 0;
      const history = await trx.deleteFrom('docflow_history').where('docflow_id', 'in', ids).executeTakeFirst();
      const docflows = await trx.deleteFrom('docflows').where('docflow_id', 'in', ids).executeTakeFirst();
      counts.history += Number(history.numDeletedRows);
      counts.docflows += Number(docflows.numDeletedRows);
      return ids.length;
    });
  }

  if (!hasBatches) return counts;
  const expired = await db.kysely.selectFrom('batches').select('id').where('expires_at', '<', now).execute();
  for (const { id } of expired) {
    // A batch of 200,000 rows goes a page of outcomes at a time, the batch last: a pass stopped
    // half-way leaves a batch with fewer outcomes, which the next pass finishes.
    for (let done = size; done === size && !stopped(); await yieldNow()) {
      done = Number(
        (
          await db.kysely
            .deleteFrom('outcomes')
            .where('batch', '=', id)
            .where('row', 'in', (eb) => eb.selectFrom('outcomes').select('row').where('batch', '=', id).limit(size))
            .executeTakeFirst()
        ).numDeletedRows,
      );
      counts.outcomes += done;
    }
    if (stopped()) break;
    const gone = await db.kysely.deleteFrom('batches').where('id', '=', id).where('expires_at', '<', now).executeTakeFirst();
    counts.batches += Number(gone.numDeletedRows);
  }
  return counts;
}

/**
 * The docflows older than the cutoff whose deal has no ledger entry left; `counting`: none left
 * once this pass's entries are gone (the dry run deletes none).
 */
function orphanDocflows(trx: Trx, cutoff: number, counting = false) {
  return trx
    .selectFrom('docflows as d')
    .where('d.updated_at', '<', cutoff)
    .where((eb) => {
      let entries = eb
        .selectFrom('ledger as l')
        .select('l.n')
        .whereRef('l.bank', '=', 'd.bank')
        .whereRef('l.type', '=', 'd.type')
        .whereRef('l.deal_id', '=', 'd.deal_id');
      if (counting) entries = entries.where((l) => l.or([l('l.updated_at', '>=', cutoff), l('l.state', '=', 'sending')]));
      return eb.not(eb.exists(entries));
    });
}

/** `--dry-run`: what a pass would delete now. */
async function countDue(db: Database, cutoff: number, now: number, counts: PruneCounts, hasBatches: boolean): Promise<PruneCounts> {
  const k = db.kysely;
  const count = async (q: { executeTakeFirst(): Promise<{ n: number | string | bigint } | undefined> }): Promise<number> =>
    Number((await q.executeTakeFirst())?.n ?? 0);
  counts.ledger = await count(
    k
      .selectFrom('ledger')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('updated_at', '<', cutoff)
      .where('state', '<>', 'sending'),
  );
  const due = orphanDocflows(k, cutoff, true);
  counts.docflows = await count(due.select((eb) => eb.fn.countAll<number>().as('n')));
  counts.history = await count(
    k
      .selectFrom('docflow_history')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('docflow_id', 'in', due.select('d.docflow_id')),
  );
  if (!hasBatches) return counts;
  counts.batches = await count(
    k
      .selectFrom('batches')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('expires_at', '<', now),
  );
  counts.outcomes = await count(
    k
      .selectFrom('outcomes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('batch', 'in', k.selectFrom('batches').select('id').where('expires_at', '<', now)),
  );
  return counts;
}

/**
 * Whether the tables exist: the batches and their outcomes came into the database in a later
 * migration than the ledger (a pass on a database migrated by an older build finds none).
 */
async function tablesExist(db: Database, names: readonly string[]): Promise<boolean> {
  const tables = new Set((await db.kysely.introspection.getTables()).map((t) => t.name));
  return names.every((n) => tables.has(n));
}

/** How often the fleet prunes: one process of it, once an hour. */
export const PRUNE_EVERY_MS = 3_600_000;
/** A process prunes no sooner than this after it started: one that starts and stops at once never does. */
export const PRUNE_FIRST_MS = 60_000;

/**
 * The turn at `task` for this process: true when no other process took it within `everyMs`. A
 * compare-and-set on the task's row (PostgreSQL's READ COMMITTED re-reads the row a concurrent
 * update changed, and the second update finds the turn taken): one process of the fleet wins.
 */
export async function takeTurn(db: Database, task: string, everyMs: number, holder: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const now = await db.now(trx);
    await trx
      .insertInto('maintenance')
      .values({ task, due_at: 0, holder: '' })
      .onConflict((c) => c.column('task').doNothing())
      .execute();
    const taken = await trx
      .updateTable('maintenance')
      .set({ due_at: now + everyMs, holder })
      .where('task', '=', task)
      .where('due_at', '<=', now)
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1;
  });
}

export interface PruningOptions {
  ledgerMs: number;
  logger: Logger;
  /** PRUNE_EVERY_MS and PRUNE_FIRST_MS unless a test says otherwise. */
  everyMs?: number;
  firstMs?: number;
  batchSize?: number;
}

export interface Pruning {
  /** Stops the timer, and a pass under way between two transactions. */
  close(): Promise<void>;
}

/**
 * A long-running process's share of the pruning (`realty-batch work`): every `everyMs` it asks for
 * the turn, and prunes when it gets it. A failed pass (the database away) is logged and tried
 * again at the next turn; nothing else waits for it.
 */
export function startPruning(db: Database, options: PruningOptions): Pruning {
  const everyMs = options.everyMs ?? PRUNE_EVERY_MS;
  const holder = `${hostname()}:${process.pid}`;
  const log = options.logger.child({ component: 'prune' });
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  const pass = async (): Promise<void> => {
    try {
      if (!(await takeTurn(db, 'prune', everyMs, holder))) return;
      const counts = await pruneDatabase(db, { ledgerMs: options.ledgerMs, batchSize: options.batchSize, signal: stop.signal });
      if (Object.values(counts).some((n) => n > 0))
        log.info({ ...counts, ledgerDays: Math.round(options.ledgerMs / DAY_MS) }, 'pruned the database of what outlived its retention');
    } catch (err) {
      log.warn(
        { err: { message: err instanceof Error ? err.message : String(err) } },
        'the pruning pass failed; it is tried again at the next turn',
      );
    }
  };
  const schedule = (ms: number): void => {
    timer = setTimeout(() => {
      running = pass().finally(() => {
        if (!stop.signal.aborted) schedule(everyMs);
      });
    }, ms);
    // A worker stops when it is told to, never held up by the next pass.
    timer.unref();
  };
  schedule(options.firstMs ?? PRUNE_FIRST_MS);
  return {
    async close() {
      stop.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
