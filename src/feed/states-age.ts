/**
 * How old the docflows' states are, and whether anything keeps them fresh: every command that
 * shows states (status, results, payments, the end of a run) says it. A state is what the news
 * feed's follower last read; with no follower running (a night run from cron exits, and nothing
 * reads the feed until the next), a deal paid or signed since still shows as waiting.
 */
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { describeAge } from '../ledger/claim.js';

/**
 * States older than this many of the follower's periods (its pause plus a read, as the feed row
 * keeps it), and at least `STALE_MIN_MS`, mean no follower reads the feed: a claim already
 * refuses past two (src/ledger/claim.ts); a busy follower may miss one or two.
 */
export const STALE_PERIODS = 5;
export const STALE_MIN_MS = 10_000;

/** How old the docflows' states are: the news feed's last complete read, on the database's clock. */
export interface StatesAge {
  /** When the feed was last read to its end (ISO); absent when no follower ever read it. */
  asOf?: string;
  /** How long ago (ms). */
  ageMs?: number;
  /** Older than a few of the follower's periods, or never read: no follower seems to run. */
  stale: boolean;
  /** Whether a process holds the follower's lock in Redis now (undefined when Redis was not asked). */
  follower?: boolean;
}

export async function readStatesAge(db: Database, redis?: Redis, keys?: Keys): Promise<StatesAge> {
  const follower = redis && keys ? (await redis.exists(keys.feedLock)) === 1 : undefined;
  const feed = await db.kysely.selectFrom('feed').select(['covered_at', 'poll_ms']).where('id', '=', 1).executeTakeFirst();
  if (!feed) return { stale: true, ...(follower !== undefined && { follower }) };
  const coveredAt = Number(feed.covered_at);
  const ageMs = Math.max(0, (await db.now()) - coveredAt);
  const allowMs = Math.max(STALE_MIN_MS, STALE_PERIODS * Number(feed.poll_ms));
  return { asOf: new Date(coveredAt).toISOString(), ageMs, stale: ageMs > allowMs, ...(follower !== undefined && { follower }) };
}

export const START_A_FOLLOWER = 'start one with `realty-batch track` (or `realty-batch work`, which follows the feed unless --no-track)';

/**
 * One sentence for stderr: how old the states are, and, when no follower seems to run, what
 * that means (`consequence`) and which command runs one.
 */
export function describeStatesAge(age: StatesAge, consequence = 'a deal signed, paid or registered since still shows as it was'): string {
  if (age.asOf === undefined)
    return `states: the news feed was never read, so no docflow's state is known; no follower seems to run: ${START_A_FOLLOWER}.`;
  const when = `states as of ${age.asOf}, ${describeAge(age.ageMs ?? 0)} ago`;
  if (age.stale && age.follower)
    return `${when}: a follower holds the feed's lock but has not read the feed to its end since (the gateway slow or down?), so ${consequence}.`;
  return age.stale ? `${when}: no follower seems to run, so ${consequence}; ${START_A_FOLLOWER}.` : `${when}.`;
}

/** Who follows the feed once this process stops following it: one sentence for the end of a run. */
export async function describeFollowingFromNow(redis: Redis, keys: Keys): Promise<string> {
  if ((await redis.exists(keys.feedLock)) === 1)
    return 'the news feed is followed from now on by another process of the fleet (realty-batch work or track): states stay fresh.';
  return `nothing follows the news feed from now on: signatures, payments and registrations are not seen until a follower runs; ${START_A_FOLLOWER}, e.g. deploy/systemd/realty-batch-track.service.`;
}
