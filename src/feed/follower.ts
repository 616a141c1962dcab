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
import type { Keys } from '../redis/keys.js';
import type { RealtyClient } from '../realty/client.js';
import type { NewsPage } from '../domain/gateway.js';
import { beginRead, commitRead, ensureFeed, type Committed, type StoreResult } from './feed-store.js';
import { createRowWaker, type RowWaker } from './wake-rows.js';
import { FollowerLock } from './follower-lock.js';
import { HighWaterMark } from './feed-mark.js';
import { LagWatch } from './lag-watch.js';

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
  /** Started alone (`realty-batch track`): the workers' own followers leave the feed to it (follower-lock.ts). */
  dedicated?: boolean;
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
  const follower = new Follower(options);
  follower.start();
  return follower;
}

type Settled = 'stop' | 'complete' | 'more';
type ReceivedPage = NewsPage & { receivedAt: number };

/**
 * A page read ahead: asked for while the one before it is stored, when that one was full
 * (the feed may hold more). `after` is the token it was read after; `readAt`, the database's clock
 * before the read began (the last one known then: a little early is safe, it only makes
 * `coveredAt` claim less).
 */
interface Read {
  after: string;
  readAt: number;
  page: Promise<ReceivedPage>;
}

/**
 * The follower: `start` runs its loop (take the lock, read a page, store it, sleep when the feed
 * had no more), `close` ends it. Its parts: the lock (follower-lock.ts), the high-water mark
 * (feed-mark.ts), the lag (lag-watch.ts), the rows to wake (wake-rows.ts), and here the pages
 * read ahead and the stores in flight.
 */
class Follower implements FeedFollower {
  private readonly redis: Redis;
  private readonly keys: Keys;
  private readonly db: Database;
  private readonly client: RealtyClient;
  private readonly log: Logger;
  private readonly pollMs: number;
  private readonly lockMs: number;
  private readonly storesAhead: number;
  private readonly lock: FollowerLock;
  private readonly mark: HighWaterMark;
  private readonly lag: LagWatch;
  private readonly waker: RowWaker;
  private stopped = false;
  /** Ends the sleep under way, if any. */
  private wake: (() => void) | undefined;
  private running: Promise<void> = Promise.resolve();
  /** The page read ahead, to store in the next step. */
  private ahead: Read | undefined;
  /** the database's clock (ms) in the last answer that gave it: earlier than any read started after. */
  private clock = 0;
  /**
   * The stores sent and not answered yet, oldest first, each as its settle: pages read ahead
   * are stored back to back, each transaction begun once the one before it ended, and their
   * answers come in that order. A store sent after one that was refused finds the
   * cursor where it was, and is refused too. Reading does not wait for them (at most
   * storesAhead): the database stores a page while the next ones are read.
   */
  private storing: Array<Promise<Settled>> = [];
  /**
   * The last store sent, up to its commit: the next begins once it committed (or failed), not
   * once Redis answered its witness's raise, so that no round trip to Redis stands between two
   * pages' transactions but the next page's own lock and witness read.
   */
  private lastCommit: Promise<Committed> | undefined;
  /** A store was refused (lost lock or moved cursor): what was read ahead is dropped. */
  private refused = false;

  constructor(options: FollowerOptions) {
    this.redis = options.redis;
    this.keys = options.keys;
    this.db = options.db;
    this.client = options.client;
    this.pollMs = options.pollMs ?? DEFAULT_FEED_POLL_MS;
    this.lockMs = options.lockMs ?? DEFAULT_FEED_LOCK_MS;
    this.storesAhead = Math.max(1, options.storesAhead ?? DEFAULT_STORES_AHEAD);
    this.log = options.logger.child({ component: 'feed' });
    this.lock = new FollowerLock(this.redis, this.keys.feedLock, this.lockMs, this.log, {
      key: this.keys.feedDedicated,
      self: options.dedicated === true,
    });
    this.mark = new HighWaterMark(this.client, this.pollMs);
    this.lag = new LagWatch(this.log);
    this.waker = createRowWaker(this.redis, this.keys, this.log);
  }

  get following(): boolean {
    return this.lock.holding;
  }

  start(): void {
    this.lock.start();
    this.running = this.loop();
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.lock.stop();
    this.wake?.();
    // A read in flight may take the gateway's timeout: the lock is given up now, and its
    // store, should it come, is refused (the lock is no longer this follower's).
    await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    await this.lock.release();
    await this.waker.close();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        if (!this.lock.holding) {
          this.ahead = undefined;
          // Every store sent is answered before the lock is asked for again: a late 'lost' must
          // not mark the lock given up after it was taken back (and a stored page's rows are woken).
          await this.drain().catch(() => undefined);
          if (!(await this.lock.acquire())) {
            await this.sleep(this.lockMs / 2);
            continue;
          }
        }
        const more = await this.step();
        if (failures > 0) this.log.info({ failures }, 'the news feed answers again');
        failures = 0;
        if (!more) await this.sleep(this.pollMs);
      } catch (err) {
        failures++;
        // One line when it starts, then one a few minutes: a gateway down all night must not fill the log.
        if (failures === 1 || failures % 50 === 0)
          this.log.warn({ err: { message: (err as Error).message }, failures }, 'the news feed could not be read; trying again');
        await this.sleep(Math.min(30_000, 500 * 2 ** Math.min(6, failures)));
      }
    }
  }

  /** One page: true when the feed may hold more at once (a full page), false when it had no more. */
  private async step(): Promise<boolean> {
    let read = this.ahead;
    this.ahead = undefined;
    if (read === undefined) {
      await this.drain();
      this.refused = false;
      this.mark.forget();
      // The cursor and the clock, taken before the read: everything the feed held at this
      // moment is in the answer.
      const start = await beginRead(this.db);
      if (start.cursor === undefined) {
        await ensureFeed(this.db, this.client);
        return true;
      }
      this.clock = start.now;
      read = this.readAfter(start.cursor, start.now);
    }
    let page: ReceivedPage;
    try {
      page = await read.page;
    } catch (err) {
      await this.drain().catch(() => undefined);
      throw err;
    }
    // A page with items: the feed may hold more (a page's length proves nothing: it may be cut short
    // at any size), so the next is read while this one is stored, until a read gives nothing. The store
    // checks that the cursor is still this page's `after`, so a page is stored only after the one before it.
    const full = page.news.length > 0;
    const markAt = await this.mark.reached(read.after, page);
    const next = full && !this.stopped && !this.refused ? this.readAfter(page.lastToken, this.clock) : undefined;
    if (next) this.mark.ask(this.clock);
    this.store(read, page, markAt);
    if (next === undefined) {
      // Nothing read ahead (the feed had no more, or a store was refused): every answer now, this page's last.
      const last = await this.drain();
      if (this.refused) return this.lock.holding;
      return last === 'more';
    }
    while (this.storing.length > this.storesAhead && !this.refused) {
      try {
        await this.storing.shift();
      } catch (err) {
        await this.drain().catch(() => undefined);
        throw err;
      }
    }
    if (this.refused) {
      // A page before was refused: so is this one (unless the cursor came to its `after`
      // meanwhile); the page read ahead is dropped and the next step starts from the database's cursor.
      // A store that failed meanwhile is thrown here, for the loop's log and backoff.
      await this.drain();
      return this.lock.holding;
    }
    this.ahead = next;
    return true;
  }

  private readAfter(after: string, readAt: number): Read {
    const began = performance.now();
    // When the answer came, on the database's clock: the read's start plus its time here.
    const page = this.client.news(after).then((p) => ({ ...p, receivedAt: readAt + Math.round(performance.now() - began) }));
    // Read ahead and maybe dropped (the store before it failed): its failure is not unhandled.
    page.catch(() => undefined);
    return { after, readAt, page };
  }

  /** Sends the page's store, begun once the one before it ended: in the database's order, as they were read. */
  private store(read: Read, page: ReceivedPage, markAt: number | undefined): void {
    const lag = this.lag.take();
    const toStore = {
      lockToken: this.lock.token,
      after: read.after,
      lastToken: page.lastToken,
      readAt: read.readAt,
      items: page.news,
      pollMs: this.pollMs,
      receivedAt: page.receivedAt,
      ...(markAt !== undefined && { markAt }),
      ...(lag && { lag }),
    };
    const previous = this.lastCommit;
    const commit = () => commitRead(this.redis, this.keys, this.db, toStore);
    const committed = previous ? previous.then(commit, commit) : commit();
    this.lastCommit = committed;
    const settled = this.settle(committed);
    // Answered in a later step, or dropped with a failure here: never unhandled.
    settled.catch(() => undefined);
    this.storing.push(settled);
  }

  /** A store's answer: 'stop' when it was refused (lost lock or moved cursor), else whether the feed was all read. */
  private async settle(pending: Promise<Committed>): Promise<Settled> {
    const { result: stored, now, raised } = await pending;
    await raised;
    if (now !== undefined) this.clock = now;
    if (stored.kind === 'lost') {
      this.refused = true;
      this.lock.lost();
      return 'stop';
    }
    // Moved: another follower stored this page; the next read starts from the database's cursor.
    if (stored.kind === 'moved') {
      this.refused = true;
      return 'stop';
    }
    this.report(stored);
    // Their rows sleep until their try's end plus --feed-lag-ms: run them now.
    this.waker.wake(stored.wake);
    return stored.complete ? 'complete' : 'more';
  }

  /** What a stored page found, in the log; its lag samples, to the lag watch. */
  private report(stored: Extract<StoreResult, { kind: 'stored' }>): void {
    if (stored.restore)
      this.log.error(
        { evidence: stored.restore.why, givenBack: stored.restore.lost },
        'the database was restored from an older copy (or lost committed writes): the docflows made since are entered from the news feed, and nothing is sent before the feed is read to its end; check that DATABASE_URL names the live database (realty-batch status)',
      );
    if (stored.resolved > 0) this.log.info({ resolved: stored.resolved }, 'lost answers found in the news feed');
    if (stored.lags.length > 0) this.lag.add(stored.lags);
    for (const d of stored.duplicates)
      this.log.error(
        { dealBatch: d.batch, row: d.row, docflowId: d.docflow_id, keptDocflowId: d.kept_docflow_id, requestId: d.request_id, how: d.how },
        'a deal has two docflows at the gateway (DUPLICATE_DOCFLOW): both are followed; one must be cancelled',
      );
    for (const o of stored.overruled)
      this.log.error(
        { dealBatch: o.batch, row: o.row, dealId: o.dealId, docflowId: o.docflowId, requestId: o.requestId },
        "the news feed shows a docflow for a try an operator resolved as having none (ledger --resolve-none): the feed's evidence is kept, the deal has this docflow and is not sent again",
      );
  }

  /**
   * Waits for every store in flight, in order: before a fresh start, a sleep, or on a failure.
   * The last one's answer (`refused` tells whether any was refused); the first failure is thrown
   * once all have ended.
   */
  private async drain(): Promise<Settled | undefined> {
    const pending = this.storing;
    this.storing = [];
    this.lastCommit = undefined;
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
  }
}
