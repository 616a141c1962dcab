/**
 * The fleet's one follower of the gateway's news feed. Every `run` and `work` process
 * (and `realty-batch track`) starts one; a lock in Redis lets one of them follow at a
 * time, and a follower that dies loses it within `lockMs` (5 s), for the next to take.
 * It reads the feed after the cursor kept in the database and moves the cursor on only in
 * the transaction that stores what the page said, so a crash reads a page again and never
 * skips one. What it stores: each item whose requestId is a try of ours still waiting for an
 * answer gives that deal its docflow (a lost answer found) and wakes its row's job
 * (wake-rows.ts); items of docflows it does not know (answered already, or made by
 * another system on the same account) are counted.
 */
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import { tokenLock } from '../redis/token-lock.js';
import type { Keys } from '../redis/keys.js';
import type { RealtyClient } from '../realty/client.js';
import type { NewsPage } from '../domain/gateway.js';
import { beginRead, ensureFeed, storeRead } from './feed-store.js';
import { createRowWaker } from './wake-rows.js';
import { createLagWindow, lagAllowance, type LagFigures } from '../ledger/feed-lag.js';

export interface FollowerOptions {
  redis: Redis;
  keys: Keys;
  /** The system of record: the cursor, the ledger and the docflows' states. */
  db: Database;
  client: RealtyClient;
  logger: Logger;
  /** How often the feed is read once it has nothing new (ms). */
  pollMs?: number;
  /** How long the lock outlives a follower that stopped renewing it (ms). */
  lockMs?: number;
  /** Pages stored and not yet answered while the next is read (DEFAULT_STORES_AHEAD); 1 waits for each store before the next but one. */
  storesAhead?: number;
}

export interface FeedFollower {
  /** True while this process holds the lock. */
  readonly following: boolean;
  close(): Promise<void>;
}

export const DEFAULT_FEED_POLL_MS = 1000;
export const DEFAULT_FEED_LOCK_MS = 5000;
/**
 * Pages stored and not yet answered while the next is read: reading never waits for Redis
 * unless this many are behind (docs/performance.md, "Stores not awaited before the next read").
 */
export const DEFAULT_STORES_AHEAD = 4;

export function startFeedFollower(options: FollowerOptions): FeedFollower {
  const { redis, keys, db, client, logger } = options;
  const pollMs = options.pollMs ?? DEFAULT_FEED_POLL_MS;
  const lockMs = options.lockMs ?? DEFAULT_FEED_LOCK_MS;
  const storesAhead = Math.max(1, options.storesAhead ?? DEFAULT_STORES_AHEAD);
  const lock = tokenLock(redis, keys.feedLock, lockMs);
  const log = logger.child({ component: 'feed' });
  const waker = createRowWaker(redis, keys, log);
  let holding = false;
  let stopped = false;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const setHolding = (now: boolean): void => {
    if (now === holding) return;
    holding = now;
    if (now) log.info({ lockMs }, 'following the gateway news feed for the fleet');
    else if (!stopped) log.warn('another process follows the news feed now (this one stopped renewing its lock in time)');
  };

  // Renewed on its own timer, not between reads: a read may take the gateway's whole timeout.
  const renewal = setInterval(
    () => {
      if (!holding) return;
      lock
        .renew()
        .then((ok) => ok || setHolding(false))
        .catch(() => undefined);
    },
    Math.max(100, Math.floor(lockMs / 3)),
  );
  renewal.unref();

  /**
   * A page read ahead: asked for while the one before it is stored, when that one was full
   * (the feed may hold more). `after` is the token it was read after; `readAt`, the database's clock
   * before the read began (the last one known then: a little early is safe, it only makes
   * `coveredAt` claim less).
   */
  let ahead: { after: string; readAt: number; page: Promise<NewsPage & { receivedAt: number }> } | undefined;
  /** The feed's lag behind the answers, measured (src/ledger/feed-lag.ts); written with the next page stored. */
  const lagWindow = createLagWindow();
  let lagToWrite: LagFigures | undefined;
  /** The allowance last said in the log: a line each time it doubles. */
  let lagSaid = 0;
  /**
   * A high-water mark: the newest token a read without `after` gave, asked at `at` (the database's
   * clock before the call). Once a stored page reaches it, the feed is known complete up to `at`,
   * however long its pages: under a feed that always has something new (no read ever comes back
   * empty) the coverage still keeps up. Asked while pages with items are read one after another,
   * at most one pending, at most one each half poll period.
   */
  let mark: { at: number; token: Promise<string | undefined> } | undefined;
  let lastMarkAt = 0;
  const askMark = (at: number): void => {
    if (mark || at - lastMarkAt < pollMs / 2) return;
    mark = {
      at,
      token: client.news().then(
        (p) => p.lastToken,
        () => undefined,
      ),
    };
  };
  /** Whether this page reaches the pending mark: the time it completes the feed to, if so. */
  const reached = async (after: string, page: NewsPage): Promise<number | undefined> => {
    if (page.news.length === 0) mark = undefined; // an empty read says more, of a later moment
    if (!mark) return undefined;
    const token = await mark.token;
    if (token !== undefined && token !== after && !page.news.some((i) => i.token === token)) return undefined;
    const at = mark.at;
    mark = undefined;
    if (token === undefined) return undefined;
    lastMarkAt = at;
    return at;
  };
  /** the database's clock (ms) in the last answer that gave it: earlier than any read started after. */
  let clock = 0;

  const readAfter = (after: string, readAt: number) => {
    const began = performance.now();
    // When the answer came, on the database's clock: the read's start plus its time here.
    const page = client.news(after).then((p) => ({ ...p, receivedAt: readAt + Math.round(performance.now() - began) }));
    // Read ahead and maybe dropped (the store before it failed): its failure is not unhandled.
    page.catch(() => undefined);
    return { after, readAt, page };
  };

  type Stored = Awaited<ReturnType<typeof storeRead>>;
  type Settled = 'stop' | 'complete' | 'more';
  /**
   * The stores sent and not answered yet, oldest first, each as its settle: pages read ahead
   * are stored back to back, each transaction begun once the one before it ended, and their
   * answers come in that order. A store sent after one that was refused finds the
   * cursor where it was, and is refused too. Reading does not wait for them (at most
   * storesAhead): the database stores a page while the next ones are read.
   */
  let storing: Array<Promise<Settled>> = [];
  /** A store was refused (lost lock or moved cursor): what was read ahead is dropped. */
  let refused = false;

  /** A store's answer: 'stop' when it was refused (lost lock or moved cursor), else whether the feed was all read. */
  const settle = async (pending: Promise<Stored>): Promise<Settled> => {
    const { result: stored, now } = await pending;
    if (now !== undefined) clock = now;
    if (stored.kind === 'lost') {
      refused = true;
      setHolding(false);
      return 'stop';
    }
    // Moved: another follower stored this page; the next read starts from the database's cursor.
    if (stored.kind === 'moved') {
      refused = true;
      return 'stop';
    }
    if (stored.restore)
      log.error(
        { evidence: stored.restore.why, givenBack: stored.restore.lost },
        'the database was restored from an older copy (or lost committed writes): the docflows made since are entered from the news feed, and nothing is sent before the feed is read to its end; check that DATABASE_URL names the live database (realty-batch status)',
      );
    if (stored.resolved > 0) log.info({ resolved: stored.resolved }, 'lost answers found in the news feed');
    if (stored.lags.length > 0) {
      lagWindow.add(stored.lags);
      lagToWrite = lagWindow.figures();
      const allowance = lagToWrite ? lagAllowance(0, lagToWrite.p99) : 0;
      if (lagToWrite && allowance >= 1000 && allowance >= 2 * lagSaid) {
        lagSaid = allowance;
        log.warn(
          { lagP99Ms: lagToWrite.p99, lagMaxMs: lagToWrite.max, samples: lagToWrite.samples, waitMs: allowance },
          'the news feed shows docflows late: a try whose answer was lost is judged only once the feed was read complete this long after its end, whatever --feed-lag-ms says',
        );
      }
    }
    for (const d of stored.duplicates)
      log.error(
        { dealBatch: d.batch, row: d.row, docflowId: d.docflow_id, keptDocflowId: d.kept_docflow_id, requestId: d.request_id, how: d.how },
        'a deal has two docflows at the gateway (DUPLICATE_DOCFLOW): both are followed; one must be cancelled',
      );
    for (const o of stored.overruled)
      log.error(
        { dealBatch: o.batch, row: o.row, dealId: o.dealId, docflowId: o.docflowId, requestId: o.requestId },
        "the news feed shows a docflow for a try an operator resolved as having none (ledger --resolve-none): the feed's evidence is kept, the deal has this docflow and is not sent again",
      );
    // Their rows sleep until their try's end plus --feed-lag-ms: run them now.
    waker.wake(stored.wake);
    return stored.complete ? 'complete' : 'more';
  };

  /**
   * Waits for every store in flight, in order: before a fresh start, a sleep, or on a failure.
   * The last one's answer (`refused` tells whether any was refused); the first failure is thrown
   * once all have ended.
   */
  const drain = async (): Promise<Settled | undefined> => {
    const pending = storing;
    storing = [];
    let last: Settled | undefined;
    let failure: { err: unknown } | undefined;
    for (const settled of pending) {
      try {
        last = await settled;
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
    return last;
  };

  /** One page: true when the feed may hold more at once (a full page), false when it had no more. */
  const step = async (): Promise<boolean> => {
    let read = ahead;
    ahead = undefined;
    if (read === undefined) {
      await drain();
      refused = false;
      mark = undefined;
      // The cursor and the clock, taken before the read: everything the feed held at this
      // moment is in the answer.
      const start = await beginRead(db);
      if (start.cursor === undefined) {
        await ensureFeed(db, client);
        return true;
      }
      clock = start.now;
      read = readAfter(start.cursor, start.now);
    }
    let page: NewsPage & { receivedAt: number };
    try {
      page = await read.page;
    } catch (err) {
      await drain().catch(() => undefined);
      throw err;
    }
    // A page with items: the feed may hold more (a page's length proves nothing: it may be cut short
    // at any size), so the next is read while this one is stored, until a read gives nothing. The store
    // checks that the cursor is still this page's `after`, so a page is stored only after the one before it.
    const full = page.news.length > 0;
    const markAt = await reached(read.after, page);
    const next = full && !stopped && !refused ? readAfter(page.lastToken, clock) : undefined;
    if (next) askMark(clock);
    // Each store begins once the one before it ended: in the database's order, as they were read.
    const toStore = {
      lockToken: lock.token,
      after: read.after,
      lastToken: page.lastToken,
      readAt: read.readAt,
      items: page.news,
      pollMs,
      receivedAt: page.receivedAt,
      ...(markAt !== undefined && { markAt }),
      ...(lagToWrite && { lag: lagToWrite }),
    };
    lagToWrite = undefined;
    const previous = storing.at(-1);
    const settled = settle(
      previous
        ? previous.then(
            () => storeRead(redis, keys, db, toStore),
            () => storeRead(redis, keys, db, toStore),
          )
        : storeRead(redis, keys, db, toStore),
    );
    // Answered in a later step, or dropped with a failure here: never unhandled.
    settled.catch(() => undefined);
    storing.push(settled);
    if (next === undefined) {
      // Nothing read ahead (the feed had no more, or a store was refused): every answer now, this page's last.
      const last = await drain();
      if (refused) return holding;
      return last === 'more';
    }
    while (storing.length > storesAhead && !refused) {
      try {
        await storing.shift();
      } catch (err) {
        await drain().catch(() => undefined);
        throw err;
      }
    }
    if (refused) {
      // A page before was refused: so is this one (unless the cursor came to its `after`
      // meanwhile); the page read ahead is dropped and the next step starts from the database's cursor.
      // A store that failed meanwhile is thrown here, for the loop's log and backoff.
      await drain();
      return holding;
    }
    ahead = next;
    return true;
  };

  const loop = async (): Promise<void> => {
    let failures = 0;
    while (!stopped) {
      try {
        if (!holding) {
          ahead = undefined;
          // Every store sent is answered before the lock is asked for again: a late 'lost' must
          // not mark the lock given up after it was taken back (and a stored page's rows are woken).
          await drain().catch(() => undefined);
          const taken = await lock.acquire();
          setHolding(taken);
          if (!taken) {
            await sleep(lockMs / 2);
            continue;
          }
        }
        const more = await step();
        if (failures > 0) log.info({ failures }, 'the news feed answers again');
        failures = 0;
        if (!more) await sleep(pollMs);
      } catch (err) {
        failures++;
        // One line when it starts, then one a few minutes: a gateway down all night must not fill the log.
        if (failures === 1 || failures % 50 === 0)
          log.warn({ err: { message: (err as Error).message }, failures }, 'the news feed could not be read; trying again');
        await sleep(Math.min(30_000, 500 * 2 ** Math.min(6, failures)));
      }
    }
  };
  const running = loop();

  return {
    get following() {
      return holding;
    },
    async close() {
      stopped = true;
      clearInterval(renewal);
      wake?.();
      // A read in flight may take the gateway's timeout: the lock is given up now, and its
      // store, should it come, is refused (the lock is no longer this follower's).
      await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      if (holding) await lock.release();
      holding = false;
      await waker.close();
    },
  };
}
