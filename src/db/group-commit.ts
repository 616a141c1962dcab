/**
 * Group commit: the decisions asked for during one turn of the event loop (a worker's claims
 * and outcomes of the jobs whose answers came in together) share one transaction, one commit
 * (one fsync on SQLite), as the Redis script batcher sends them in one pipeline.
 *
 * Each decision names the ledger key it decides on; they run sorted by key (PostgreSQL locks
 * the rows in that order: two workers' groups never wait on each other in a cycle), those of
 * one key in the order they were asked. A decision that fails fails the group: the others are
 * run again, each in a transaction of its own, so one bad decision costs only itself.
 */
import type { Database, Trx } from './database.js';

export type Decision<T> = (trx: Trx, now: number) => Promise<T>;

/** Runs `decide` in this turn's transaction; resolves once that transaction committed. */
export type Committer = <T>(key: string, decide: Decision<T>) => Promise<T>;

interface Pending {
  key: string;
  seq: number;
  decide: Decision<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** The database's clock, read once per transaction (SQLite's is this host's: no query). */
async function run<T>(db: Database, decide: (trx: Trx, now: number) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => decide(trx, await db.now(trx)));
}

export function createCommitter(db: Database): Committer {
  let queued: Pending[] = [];
  let seq = 0;

  const alone = (p: Pending): void => void run(db, p.decide).then(p.resolve, p.reject);

  const flush = (): void => {
    const group = queued;
    queued = [];
    if (group.length === 1) return alone(group[0]!);
    group.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.seq - b.seq));
    run(db, async (trx, now) => {
      const results: unknown[] = [];
      for (const p of group) results.push(await p.decide(trx, now));
      return results;
    }).then(
      (results) => group.forEach((p, i) => p.resolve(results[i])),
      () => group.forEach(alone),
    );
  };

  return <T>(key: string, decide: Decision<T>) =>
    new Promise<T>((resolve, reject) => {
      if (queued.length === 0) setImmediate(flush);
      queued.push({ key, seq: seq++, decide, resolve: resolve as (v: unknown) => void, reject });
    });
}

/** One decision in a transaction of its own, for callers outside a worker's hot path. */
export function commitAlone(db: Database): Committer {
  return (_key, decide) => run(db, decide);
}
