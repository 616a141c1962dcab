/**
 * The end of a run waits for the news feed to have been read past its resent deals. A try judged
 * to have made nothing and sent again made a second docflow if the feed was later than the wait
 * the judgement allowed; by the end of the run the follower may have measured the feed's real lag
 * (src/ledger/feed-lag.ts). So the run waits until the feed was read complete the allowance (the
 * configured lag, or the measured one if longer) after the last outcome of a resent deal: a
 * second docflow the feed shows by then is in the results (DUPLICATE_DOCFLOW), not after them.
 * Deals sent once are not waited for: their answer came, nothing else of theirs can be in the feed.
 * Past the wait's bound it is said, with how many deals: `realty-batch status <batch>` tells later.
 */
import type { Database } from '../db/database.js';
import { lagAllowance } from '../ledger/feed-lag.js';

/** The longest the end of a run waits for the feed (ms). */
export const FEED_SHOW_WAIT_MS = 5 * 60_000;

/** The deals of the batch with a try judged to have made nothing (so maybe sent twice), and the last of their outcomes (database clock). */
export async function resentDeals(db: Database, batch: string): Promise<{ count: number; lastAt: number }> {
  const r = await db.kysely
    .selectFrom('ledger as l')
    .innerJoin('outcomes as o', (j) => j.onRef('o.batch', '=', 'l.batch').onRef('o.row', '=', 'l.row'))
    .select((eb) => [eb.fn.countAll<number | string | bigint>().as('n'), eb.fn.max('o.updated_at').as('last')])
    .where('l.batch', '=', batch)
    .where('l.judged_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return { count: Number(r.n), lastAt: r.last === null ? 0 : Number(r.last) };
}

/**
 * Waits until the feed was read complete `lagAllowance` after the batch's last resent outcome, or
 * `timeoutMs`: 0 when it was (or nothing was resent), else how many resent deals are not ruled out.
 */
export async function waitUntilFeedShows(
  db: Database,
  batch: string,
  options: { feedLagMs: number; timeoutMs: number; pollMs?: number; signal?: AbortSignal },
): Promise<number> {
  const resent = await resentDeals(db, batch);
  if (resent.count === 0) return 0;
  const until = Date.now() + options.timeoutMs;
  const pollMs = options.pollMs ?? 200;
  for (;;) {
    const feed = await db.kysely.selectFrom('feed').select(['covered_at', 'lag_p99_ms']).where('id', '=', 1).executeTakeFirst();
    const due = resent.lastAt + lagAllowance(options.feedLagMs, Number(feed?.lag_p99_ms ?? 0));
    if (feed && Number(feed.covered_at) >= due) return 0;
    if (Date.now() >= until || options.signal?.aborted) return resent.count;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
