/**
 * The news feed around a follow-up command: a follower in this process while it runs (one
 * process of the fleet follows at a time: when another does, this one stands by), so that a
 * follow-up is claimed only while the feed is known complete, an answer lost is found, and the
 * states the command prints (and `results` writes) are the feed's after its calls.
 */
import type { Database } from '../db/database.js';
import { ensureFeed } from '../feed/feed-store.js';
import { startFeedFollower } from '../feed/follower.js';
import type { Logger } from '../logger.js';
import type { RealtyClient } from '../realty/client.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

export interface FeedWatchOptions {
  redis: Redis;
  keys: Keys;
  db: Database;
  client: RealtyClient;
  logger: Logger;
  /** false: this process never follows (`--no-track`): another of the fleet must. */
  track: boolean;
}

/** Runs `use` with a follower of the feed in this process (unless `track` is false). */
export async function withFeedFollower<T>(options: FeedWatchOptions, use: () => Promise<T>): Promise<T> {
  // A cursor before any follow-up is claimed: a lost answer's docflow can never come before it.
  await ensureFeed(options.db, options.client);
  if (!options.track) return use();
  const follower = startFeedFollower({
    redis: options.redis,
    keys: options.keys,
    db: options.db,
    client: options.client,
    logger: options.logger,
  });
  try {
    return await use();
  } finally {
    await follower.close();
  }
}

/** Waits until the feed was read complete after `at` (database clock), or `timeoutMs`: whether it was. */
export async function waitForFeedPast(db: Database, at: number, timeoutMs: number, pollMs = 100): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const feed = await db.kysely.selectFrom('feed').select('covered_at').where('id', '=', 1).executeTakeFirst();
    if (feed && Number(feed.covered_at) > at) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** The states the feed last showed of these docflows (absent: never shown). */
export async function feedStates(db: Database, docflowIds: readonly string[]): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  const ids = [...new Set(docflowIds)];
  for (let from = 0; from < ids.length; from += 500) {
    const rows = await db.kysely
      .selectFrom('docflows')
      .select(['docflow_id', 'st'])
      .where('docflow_id', 'in', ids.slice(from, from + 500))
      .execute();
    for (const r of rows) if (r.st) states.set(r.docflow_id, r.st);
  }
  return states;
}
