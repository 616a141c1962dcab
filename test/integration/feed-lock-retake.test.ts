/**
 * The follower's stores in flight when it loses its lock: every one of them is answered before
 * it asks for the lock again, so a late answer (`lost`, or a failure) can never undo the lock
 * taken back after it, nor go unseen. Against the shared Redis and the real sandbox; the
 * follower's connection is the real one with its page stores held at a gate, so that the test
 * chooses when each runs in Redis and when its answer comes back: the orders that Redis and the
 * event loop give only now and then (an answer that comes in the same read of the socket as the
 * renewal's). Both tests fail on the follower before these fixes (b9458d2).
 */
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ensureFeed, readFeedState } from '../../src/feed/feed-store.js';
import { startFeedFollower } from '../../src/feed/follower.js';
import { createLogger } from '../../src/logger.js';
import type { RedisClient } from '../../src/redis/connection.js';
import { createKeys, type Keys } from '../../src/redis/keys.js';
import { createRealtyClient, type RealtyClient } from '../../src/realty/client.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { DOCFLOW_PATH, encumbranceRequest, post } from '../helpers/sandbox-http.js';
import { waitFor } from '../helpers/wait-for.js';

const DAY = 24 * 3600 * 1000;
const LOCK_MS = 3000;
const ITEMS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** A page store held back: run in Redis when the test says, answered when the test says. */
interface Held {
  exec: () => Promise<unknown>;
  ran?: Promise<Outcome>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * The follower's connection: the real client, but while `holding` its page stores (the scripts
 * whose keys are the feed, its lock and the state counts) wait at the gate; `lockAsked` counts
 * its `SET ... NX` calls, the asking for the lock.
 */
function gated(redis: Redis, keys: Keys) {
  const gate = { holding: false, held: [] as Held[], lockAsked: 0 };
  const isStore = (args: unknown[]) => args[1] === 3 && args[2] === keys.feed && args[3] === keys.feedLock;
  const connection = new Proxy(redis, {
    get(target, prop) {
      if (prop === 'evalsha' || prop === 'eval')
        return (...args: unknown[]) => {
          const call = () => (target[prop] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (!gate.holding || !isStore(args)) return call();
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
  /** Gives the follower the answer of held store i, as Redis gave it (or `failure` instead). */
  const answer = async (i: number, failure?: Error): Promise<Outcome> => {
    const h = gate.held[i]!;
    const ran = await h.ran!;
    if (failure) h.reject(failure);
    else if (ran.ok) h.resolve(ran.value);
    else h.reject(ran.err);
    return ran;
  };
  return { gate, connection, runHeld, answer };
}

describe('the follower losing its lock with stores in flight', () => {
  let redis: Redis;
  let sandbox: RunningSandbox;
  let client: RealtyClient;
  const prefixes: string[] = [];

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    sandbox = await startSandbox({ registry: [] });
    client = createRealtyClient({ baseUrl: sandbox.url, sessionId: 'demo-session', timeoutMs: 5000 });
    // A backlog of 1,000 docflows of another system, three items each once their 50 ms steps are due.
    sandbox.configure({ lifecycleMs: 50 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await client?.close();
    await sandbox?.close();
    for (const prefix of prefixes) await deletePrefix(prefix);
  });

  /**
   * A follower with its cursor before a 3,000-item backlog of another system's docflows,
   * reading 10 ms a page, its connection gated; returns once its first page is stored.
   */
  async function startFollowing() {
    const prefix = uniquePrefix('feed-retake');
    prefixes.push(prefix);
    const keys = createKeys(prefix);
    sandbox.configure({ latencyMs: 0 });
    await ensureFeed(redis, keys, client);
    const start = Number((await readFeedState(redis, keys)).cursor);
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
    sandbox.configure({ latencyMs: 10 });
    const follower = startFeedFollower({
      redis: gating.connection,
      keys,
      client,
      logger: createLogger({ level: 'info', destination }),
      ledgerMs: DAY,
      pollMs: 50,
      lockMs: LOCK_MS,
      storesAhead: 4,
    });
    await waitFor(async () => (await readFeedState(redis, keys)).items >= 100, { timeoutMs: 10_000, intervalMs: 5, what: 'a page stored' });
    // Asked once so far: when the follower took the lock at its start.
    expect(gating.gate.lockAsked).toBe(1);
    /** The feed as this follower left it: items stored, and how far its cursor moved. */
    const feed = async () => {
      const state = await readFeedState(redis, keys);
      return { ...state, moved: Number(state.cursor) - start };
    };
    return { ...gating, keys, feed, follower, log: () => log };
  }

  /**
   * The next five page stores held at the gate (storesAhead + 1: the reading waits for the
   * oldest), the lock deleted (a pause longer than lockMs, as Redis sees it), the five run in
   * Redis (each answered `lost`) and the first one's answer given to the follower.
   */
  async function loseLockWithStoresInFlight() {
    const following = await startFollowing();
    const { gate, keys, runHeld, answer } = following;
    gate.holding = true;
    await waitFor(() => gate.held.length >= 5, { timeoutMs: 10_000, intervalMs: 2, what: 'five page stores held' });
    await sleep(50);
    expect(gate.held).toHaveLength(5);
    gate.holding = false;
    await redis.del(keys.feedLock);
    await runHeld();
    expect(await answer(0)).toEqual({ ok: true, value: ['lost'] });
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
      // What was sent before runs in Redis now, without the lock: each answer will be `lost`.
      await runHeld();
      // The page being read comes, its store is sent, and the follower's step ends: its stores
      // are not answered yet. It must not ask for the lock before they are.
      await sleep(3000);
      const askedBeforeAnswers = gate.lockAsked - 1;
      sandbox.configure({ latencyMs: 10 });
      gate.holding = false;
      await runHeld();
      for (let i = 0; i < gate.held.length; i++) expect(await answer(i)).toMatchObject({ ok: true });
      const answeredAt = performance.now();
      // A follower that asked first took the lock, then a late `lost` for its own: it stops renewing
      // and follows again only once the lock it took has expired.
      await waitFor(async () => (await feed()).items >= ITEMS, { timeoutMs: LOCK_MS * 3, intervalMs: 10, what: 'the backlog stored' });
      expect(askedBeforeAnswers).toBe(0);
      expect(performance.now() - answeredAt).toBeLessThan(LOCK_MS * 0.8);
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
  }, 30_000);

  it('logs a store that failed beside a refused one, and backs off, instead of dropping it unseen', async () => {
    const { feed, gate, follower, answer, log } = await loseLockWithStoresInFlight();
    try {
      await answer(1, new Error('READONLY You cannot write against a read only replica.'));
      for (let i = 2; i < gate.held.length; i++) await answer(i);
      await waitFor(() => log().includes('the news feed could not be read; trying again'), {
        timeoutMs: 2000,
        intervalMs: 10,
        what: 'the failed store in the log',
      });
      expect(log()).toContain('READONLY You cannot write against a read only replica.');
      // After the backoff (1 s) it follows again and stores the whole backlog, each item once.
      await waitFor(async () => (await feed()).items >= ITEMS, {
        timeoutMs: LOCK_MS * 3,
        intervalMs: 10,
        what: 'the backlog stored',
      });
      await sleep(200);
      expect(await feed()).toMatchObject({ items: ITEMS, unknown: ITEMS, conflicts: 0, moved: ITEMS });
      expect(follower.following).toBe(true);
    } finally {
      await follower.close();
    }
  }, 30_000);
});
