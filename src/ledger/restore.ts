/**
 * A database restored from an older copy: how it is told, and said.
 *
 * What keeps it safe is the claim (claim.ts): nothing is sent unless the news feed was read to
 * its end within two poll intervals (database clock). A restored database's feed row is as old
 * as its copy, so its follower first reads every page since then, and each docflow made after
 * the copy enters the ledger from the feed (src/feed/feed-page.ts) before any row may claim.
 *
 * What tells it, two kinds of evidence, each a proof (never a guess from one feed item):
 * - the feed behind this fleet's memory: after each page it stores, the follower writes to Redis
 *   (keys.feedWitness) the database's id and how many feed items that database has stored. That
 *   count only grows; a database with the same id holding fewer has lost what it had written
 *   (a restore, or PostgreSQL failed over to a replica that lagged). Redis emptied or restored
 *   too: this evidence is gone, the next one still holds;
 * - a try above the ledger's: the feed shows try n of a deal the ledger holds for a row of this
 *   deployment (its `batch` is not '') at a try below n. The ledger moves a deal's try only
 *   forward, so a later try exists only if the ledger once held it.
 * A docflow of one of our banks' INNs whose deal the ledger lacks is not evidence by itself:
 * another deployment on the same gateway account (a test fleet, a second one of the bank) makes
 * those, with the same INN. They are counted (`lacking`, since `lacking_at`) and entered into
 * the ledger as before (the feed's evidence wins); while a restore is evidenced, those of the
 * page count as docflows the feed gave back (`restore_lost`).
 *
 * Said: an error line per page with evidence (src/feed/follower.ts), `realty-batch status`
 * (describeRestore), the gauge realty_ledger_restore_suspected (the dashboard's /metrics) and the
 * alert RealtyBatchLedgerRestored (deploy/prometheus/alerts.yml), for RESTORE_ALERT_MS after the
 * last evidence.
 */
import type { Database, Trx } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { describeAge } from './claim.js';
import { luaFile } from '../redis/lua.js';
import { runCompiled } from '../db/compiled.js';

/** How long after its last evidence a restore is reported (status, the gauge, the alert). */
export const RESTORE_ALERT_MS = 24 * 3_600_000;

/** What the fleet last saw its database hold, from Redis: undefined when Redis has nothing (emptied). */
export interface Witness {
  databaseId: string;
  items: number;
}

/** The witness, as one reply (taken before the database is read: see raiseWitness). */
export async function readWitness(redis: Redis, keys: Keys): Promise<Witness | undefined> {
  const [databaseId, items] = await redis.hmget(keys.feedWitness, 'db', 'items');
  return typeof databaseId === 'string' && typeof items === 'string' ? { databaseId, items: Number(items) } : undefined;
}

/**
 * Raised, never lowered, for the same database; another database's id starts it afresh (a
 * witness compares one database with itself, never two): src/redis/lua/feed-witness-raise.lua.
 */
const RAISE = luaFile('feed-witness-raise');

/**
 * After a page's commit: the database's items, now at least `items`. Written only after the
 * commit and read before the database, so the witness is never ahead of a database that kept
 * its writes: two followers' raises landing out of order leave the larger.
 */
export async function raiseWitness(redis: Redis, keys: Keys, witness: Witness): Promise<void> {
  await RAISE.run(redis, [keys.feedWitness], [witness.databaseId, String(witness.items)]);
}

/** The database's id, '' before any command bound it (src/db/deployment.ts). */
export async function databaseIdOf(trx: Trx): Promise<string> {
  // Compiled once (src/db/compiled.ts): every feed page runs it.
  const rows = await runCompiled(trx, 'databaseIdOf', [1], () => trx.selectFrom('deployment').select('database_id').where('id', '=', 1));
  return rows[0]?.database_id ?? '';
}

/** The feed items a database holds fewer than the fleet saw it hold: > 0 only for the same database gone back. */
export function itemsBehind(witness: Witness | undefined, databaseId: string, items: number): number {
  return witness && witness.databaseId === databaseId ? Math.max(0, witness.items - items) : 0;
}

/** The evidence sentences, ids and counts only (they go to the database, logs and status). */
export const evidence = {
  behind: (items: number, behind: number): string =>
    `the database has stored ${items} news feed items, ${behind} fewer than this fleet saw it hold before (Redis): it lost writes it had committed`,
  tryAbove: (requestId: string, n: number): string =>
    `the news feed shows ${requestId}, a try above the ledger's (try ${n} of that deal, claimed by this deployment)`,
};

export interface RestoreState {
  /** Evidence within RESTORE_ALERT_MS, or the database behind the witness now. */
  suspected: boolean;
  /** The sentence for people, when suspected. */
  sentence?: string;
}

/** The restore as `status` and /metrics tell it: from the feed's row, and the witness against the database now. */
export async function readRestore(db: Database, redis: Redis, keys: Keys): Promise<RestoreState> {
  // The witness first: read after the database, a page stored in between would look like a loss.
  const witness = await readWitness(redis, keys).catch(() => undefined);
  const [feed, databaseId, now] = await Promise.all([
    db.kysely
      .selectFrom('feed')
      .select(['items', 'covered_at', 'poll_ms', 'restore_at', 'restore_seen_at', 'restore_lost', 'restore_why'])
      .where('id', '=', 1)
      .executeTakeFirst(),
    databaseIdOf(db.kysely),
    db.now(),
  ]);
  const behind = itemsBehind(witness, databaseId, Number(feed?.items ?? 0));
  const seenAt = feed?.restore_seen_at === null || feed?.restore_seen_at === undefined ? undefined : Number(feed.restore_seen_at);
  const recent = seenAt !== undefined && now - seenAt < RESTORE_ALERT_MS;
  if (!recent && behind === 0) return { suspected: false };
  const why = recent ? (feed!.restore_why ?? '') : evidence.behind(Number(feed?.items ?? 0), behind);
  const since = recent
    ? ` (first evidence ${new Date(Number(feed!.restore_at ?? seenAt)).toISOString()}, last ${new Date(seenAt).toISOString()})`
    : '';
  const lost = recent ? ` The news feed gave back ${feed!.restore_lost} docflows the ledger lacked.` : '';
  const age = feed ? now - Number(feed.covered_at) : undefined;
  const waiting =
    age !== undefined && age > 2 * Number(feed!.poll_ms)
      ? ` The feed's last complete read was ${describeAge(age)} ago: nothing is sent until a follower (\`realty-batch work\`, \`run\` or \`track\`) reads it to its end.`
      : ' Nothing was sent before the feed was read to its end.';
  return {
    suspected: true,
    sentence:
      `The database was restored from an older copy${since}: ${why}.${lost}${waiting}` +
      ' If that was not meant, check that DATABASE_URL names this deployment’s live database (docs/database.md, "Restored from an older copy").',
  };
}

/** `status`'s line: the restore in one paragraph, or undefined when none is suspected. */
export async function describeRestore(db: Database, redis: Redis, keys: Keys): Promise<string | undefined> {
  return (await readRestore(db, redis, keys)).sentence;
}
