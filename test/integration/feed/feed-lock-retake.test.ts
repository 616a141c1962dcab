/**
 * The follower's stores in flight when it loses its lock: every one of them is answered before
 * it asks for the lock again, so a late answer (`lost`, or a failure) can never undo the lock
 * taken back after it, nor go unseen. Against the shared Redis (the lock), a database of the
 * test's own (the cursor) and the real sandbox; the follower's Redis connection is the real one
 * with each page store's check of the lock (its first step, before its transaction) held at a
 * gate, so that the test chooses when each runs in Redis and when its answer comes back: the
 * orders that Redis and the event loop give only now and then (an answer that comes in the same
 * read of the socket as the renewal's). A page's store begins once the one before it ended, so
 * the gate holds one at a time; the stores behind it wait in the follower. Both tests fail on
 * the follower before these fixes (b9458d2).
 */
import { PassThrough } from 'node:stream';
import type { Redis } from 'ioredis';
import { describe, expect, afterAll } from 'vitest';
import { ensureFeed, readFeedState } from '../../../src/feed/feed-store.js';
import { startFeedFollower } from '../../../src/feed/follower.js';
import { createLogger } from '../../../src/logger.js';
import type { RedisClient } from '../../../src/redis/connection.js';
import type { Keys } from '../../../src/redis/keys.js';
import { createRealtyClient, type RealtyClient } from '../../../src/realty/client.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { harness } from '../../helpers/harness.js';
import { DOCFLOW_PATH, encumbranceRequest, post } from '../../helpers/sandbox-http.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { waitFor } from '../../helpers/wait-for.js';

const LOCK_MS = 3000;
const ITEMS = 3000;
const STORES_AHEAD = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** A page store's check of the lock held back: run in Redis when the test says, answered when the test says. */
interface Held {
  exec: () => Promise<unknown>;
  ran?: Promise<Outcome>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * The follower's connection: the real client, but while `holding` its page stores (their `GET`
 * of the lock: a store goes on to its transaction only when the lock is its own) wait at the
 * gate; `lockAsked` counts its `SET ... NX` calls, the asking for the lock.
 */
function gated(redis: Redis, keys: Keys) {
  const gate = { holding: false, held: [] as Held[], lockAsked: 0 };
  const connection = new Proxy(redis, {
    get(target, prop) {
      if (prop === 'get')
        return (...args: unknown[]) => {
          const call = () => (target.get as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (!gate.holding || args[0] !== keys.feedLock) return call();
          return new Promise((resolve, reject) => gate.held.push({ exec: call, resolve, reject }));
        };
      if (prop === 'set')
        return (...args: unknown[]) => {
          if (args.includes('NX')) gate.lockAsked++;
          return (target.set as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as unknown as RedisClient;
  /** Runs in Redis now each held store that has not run yet, in the order sent. */
  const runHeld = async (): Promise<void> => {
    for (const h of gate.held) {
      h.ran ??= h.exec().then(
        (value): Outcome => ({ ok: true, value }),
        (err: unknown): Outcome => ({ ok: false, err }),
      );
      await h.ran;
    }
  };
  /** Gives the follower the answer of held store i, as Redis gave it (run now if it was not yet), or `failure` instead. */
  const answer = async (i: number, failure?: Error): Promise<Outcome> => {
    await runHeld();
    const h = gate.held[i]!;
    const ran = await h.ran!;
    if (failure) h.reject(failure);
    else if (ran.ok) h.resolve(ran.value);
    else h.reject(ran.err);
    return ran;
  };
  return { gate, connection, runHeld, answer };
}

// The client and sandbox once for the file; a prefix and database of each test's own.
const it = harness({ per: 'file', each: ['prefix', 'db'], label: 'feed-retake', sandbox: { registry: [] } });

describe('the follower losing its lock with stores in flight', () => {
  let store: UsedDatabase;
  let redis: Redis;
  let sandbox: RunningSandbox;
  let client: RealtyClient;
  let prefix: string;
  let keys: Keys;

  it.beforeAll(({ redis: made, sandbox: started }) => {
    redis = made;
    sandbox = started;
    client = createRealtyClient({ baseUrl: sandbox.url, sessionId: 'demo-session', timeoutMs: 5000 });
    // A backlog of 1,000 docflows of another system, three items each once their 50 ms steps are due.
    sandbox.configure({ lifecycleMs: 50 });
  });
  it.beforeEach(({ prefix: made, keys: madeKeys, db }) => {
    prefix = made;
    keys = madeKeys;
    store = db;
  });
  // Before the harness closes the sandbox.
  afterAll(async () => {
    await client?.close();
  });

  /**
   * A follower with its cursor before a 3,000-item backlog of another system's docflows,
   * reading 10 ms a page, its connection gated; returns once its first page is stored.
   */
  async function startFollowing() {
    sandbox.configure({ latencyMs: 0 });
    await ensureFeed(store.db, client);
    const start = Number((await readFeedState(store.db)).cursor);
    const first = sandbox.stats().docflowsCreated;
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: `${prefix}-${first + i + j}` }))),
      );
    }
    await sleep(200);
    let log = '';
    const destination = new PassThrough();
    destination.on('data', (d: Buffer) => (log += d.toString()));
    const gating = gated(redis, keys);
    /** Each page the follower asked for (after a token), in order: how many items it gave (once it came). */
    const reads: Array<{ items?: number }> = [];
    const counted: RealtyClient = {
      ...client,
      news(after) {
        // A read without `after` is the follower's high-water mark, not a page.
        if (after === undefined) return client.news(after);
        const read: { items?: number } = {};
        reads.push(read);
        const page = client.news(after);
        void page.then((p) => (read.items = p.news.length)).catch(() => undefined);
        return page;
      },
    };
    sandbox.configure({ latencyMs: 10 });
    const follower = startFeedFollower({
      redis: gating.connection,
      keys,
      db: store.db,
      client: counted,
      logger: createLogger({ level: 'info', destination }),
      pollMs: 50,
      lockMs: LOCK_MS,
      storesAhead: STORES_AHEAD,
    });
    await waitFor(async () => (await readFeedState(store.db)).items >= 100, { timeoutMs: 10_000, intervalMs: 5, what: 'a page stored' });
    // Asked once so far: when the follower took the lock at its start.
    expect(gating.gate.lockAsked).toBe(1);
    /** The feed as this follower left it: items stored, and how far its cursor moved. */
    const feed = async () => {
      const state = await readFeedState(store.db);
      return { ...state, moved: Number(state.cursor) - start };
    };
    /** The pages asked for whose items are not all stored (in flight, or their store not answered). */
    const behind = async (): Promise<number> => {
      const stored = (await readFeedState(store.db)).items;
      let sum = 0;
      let pages = 0;
      for (const read of reads) {
        if (read.items === undefined || sum + read.items > stored) break;
        sum += read.items;
        pages++;
      }
      return reads.length - pages;
    };
    return { ...gating, keys, feed, behind, follower, log: () => log };
  }

  /**
   * Five page stores in flight (storesAhead + 1: the reading waits for the oldest), the oldest
   * held at the gate and the others behind it in the follower, the page after them being read;
   * the lock deleted (a pause longer than lockMs, as Redis sees it), and the oldest run in Redis
   * and answered (`lost`: the lock's GET finds it gone) to the follower.
   */
  async function loseLockWithStoresInFlight() {
    const following = await startFollowing();
    const { gate, keys, behind, answer } = following;
    gate.holding = true;
    await waitFor(() => gate.held.length >= 1, { timeoutMs: 10_000, intervalMs: 2, what: 'a page store held' });
    await waitFor(async () => (await behind()) >= STORES_AHEAD + 2, {
      timeoutMs: 10_000,
      intervalMs: 2,
      what: 'five page stores in flight',
    });
    await sleep(50);
    expect(await behind()).toBe(STORES_AHEAD + 2);
    expect(gate.held).toHaveLength(1);
    await redis.del(keys.feedLock);
    expect(await answer(0)).toEqual({ ok: true, value: null });
    return following;
  }

  const lockGivenUp = (log: string) => log.split('\n').filter((l) => l.includes('another process follows the news feed now')).length;

  it('answers every store sent before it asks for the lock again, when its renewal found the lock gone, and keeps the lock it takes', async () => {
    const { feed, gate, keys, follower, runHeld, answer, log } = await startFollowing();
    try {
      // Reads of 2.5 s: the renewal (every lockMs / 3) comes while the follower waits for a page.
      sandbox.configure({ latencyMs: 2500 });
      gate.holding = true;
      await waitFor(() => gate.held.length >= 1, { timeoutMs: 10_000, intervalMs: 2, what: 'a page store held' });
      await redis.del(keys.feedLock);
      await waitFor(() => !follower.following, { timeoutMs: LOCK_MS, intervalMs: 5, what: 'the renewal to find the lock gone' });
      // What was sent before runs in Redis now, without the lock: its answer will be `lost`, and so
      // will be those of the stores behind it.
      await runHeld();
      // The page being read comes, its store is sent, and the follower's step ends: its stores
      // are not answered yet. It must not ask for the lock before they are.
      await sleep(3000);
      const askedBeforeAnswers = gate.lockAsked - 1;
      sandbox.configure({ latencyMs: 10 });
      gate.holding = false;
      await runHeld();
      const storedBefore = (await feed()).items;
      for (let i = 0; i < gate.held.length; i++) expect(await answer(i)).toMatchObject({ ok: true });
      const answeredAt = performance.now();
      // A follower that asked first took the lock, then a late `lost` for its own: it stops renewing
      // and follows again only once the lock it took has expired. This one takes it and stores at once.
      await waitFor(async () => follower.following && (await feed()).items > storedBefore, {
        timeoutMs: LOCK_MS * 3,
        intervalMs: 10,
        what: 'a page stored after the answers',
      });
      expect(askedBeforeAnswers).toBe(0);
      expect(performance.now() - answeredAt).toBeLessThan(LOCK_MS * 0.8);
      await waitFor(async () => (await feed()).items >= ITEMS, { timeoutMs: 20_000, intervalMs: 10, what: 'the backlog stored' });
      expect(follower.following).toBe(true);
      expect(lockGivenUp(log())).toBe(1);
      await sleep(LOCK_MS / 2);
      expect(follower.following).toBe(true);
      expect(gate.lockAsked - 1).toBe(1);
      // Every item once: a page stored twice, or one skipped, would move these off 3,000.
      expect(await feed()).toMatchObject({ items: ITEMS, unknown: ITEMS, resolved: 0, conflicts: 0, moved: ITEMS });
    } finally {
      await follower.close();
    }
  }, 60_000);

  it('logs a store that failed beside a refused one, and backs off, instead of dropping it unseen', async () => {
    const { feed, gate, follower, answer, log } = await loseLockWithStoresInFlight();
    try {
      // The four stores behind the refused one come to the gate one after the other: the second fails.
      const next = (i: number) => waitFor(() => gate.held.length > i, { timeoutMs: 5000, intervalMs: 2, what: `page store ${i + 1} held` });
      await next(1);
      await answer(1, new Error('READONLY You cannot write against a read only replica.'));
      for (let i = 2; i <= STORES_AHEAD; i++) {
        await next(i);
        // The last of the five: what the follower sends after its backoff is not held.
        if (i === STORES_AHEAD) gate.holding = false;
        expect(await answer(i)).toEqual({ ok: true, value: null });
      }
      await waitFor(() => log().includes('the news feed could not be read; trying again'), {
        timeoutMs: 2000,
        intervalMs: 10,
        what: 'the failed store in the log',
      });
      expect(log()).toContain('READONLY You cannot write against a read only replica.');
      // After the backoff (1 s) it follows again and stores the whole backlog, each item once.
      await waitFor(async () => (await feed()).items >= ITEMS, {
        timeoutMs: 20_000,
        intervalMs: 10,
        what: 'the backlog stored',
      });
      await sleep(200);
      expect(await feed()).toMatchObject({ items: ITEMS, unknown: ITEMS, conflicts: 0, moved: ITEMS });
      expect(follower.following).toBe(true);
    } finally {
      await follower.close();
    }
  }, 60_000);
});
