/**
 * The fleet's follower of the gateway's news feed, against the real sandbox, Redis (its lock)
 * and the database (its cursor): one follower at a time, a cursor that survives it, and a
 * coverage that keeps up with a busy feed (without it, every lost answer would wait out the
 * reconcile timeout).
 */
import { describe, expect, afterEach } from 'vitest';
import { readFeedState } from '../../../src/feed/feed-store.js';
import { startFeedFollower, type FeedFollower } from '../../../src/feed/follower.js';
import { createLogger } from '../../../src/logger.js';
import { createRealtyClient, type RealtyClient } from '../../../src/realty/client.js';
import { harness } from '../../helpers/harness.js';
import { DOCFLOW_PATH, encumbranceRequest, post } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

const quiet = createLogger({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// One Redis client for the file; a prefix, a sandbox (an empty registry, its default session) and a database for each test.
const it = harness({ per: 'file', each: ['prefix', 'sandbox', 'db'], label: 'feed', sandbox: { registry: [] } });

describe('the news feed follower', () => {
  let client: RealtyClient;
  const followers: FeedFollower[] = [];
  let follow: (lockMs?: number) => FeedFollower;
  /** A docflow made by another system on the same account (a requestId that is not ours). */
  let otherSystem: (i: number) => Promise<unknown>;
  const POLL = { timeoutMs: 10_000, intervalMs: 20 };

  it.beforeEach(({ redis, keys, db: store, sandbox }) => {
    client = createRealtyClient({ baseUrl: sandbox.url, sessionId: 'demo-session', timeoutMs: 5000 });
    follow = (lockMs = 1000) => {
      const f = startFeedFollower({ redis, keys, db: store.db, client, logger: quiet, pollMs: 50, lockMs });
      followers.push(f);
      return f;
    };
    otherSystem = (i: number) => post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: `erp-${i}` }));
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterEach(async () => {
    for (const f of followers.splice(0)) await f.close();
    await client.close();
  });

  it('is one process at a time: a second stands by, and takes over within seconds of a follower that died', async ({ redis, keys }) => {
    const first = follow();
    await waitFor(() => first.following, { ...POLL, what: 'the first to follow' });
    const second = follow();
    await sleep(1500);
    expect([first.following, second.following]).toEqual([true, false]);
    // The first dies without letting go (a SIGKILL): its lock runs out, the second takes it.
    await redis.set(keys.feedLock, 'a-dead-follower', 'PX', 1000);
    await first.close();
    await redis.set(keys.feedLock, 'a-dead-follower', 'PX', 1000);
    const died = Date.now();
    await waitFor(() => second.following, { ...POLL, what: 'the second to take over' });
    expect(Date.now() - died).toBeLessThan(3000);
  });

  it('resumes from its cursor in the database: every item after it is read once, none skipped, across followers', async ({
    sandbox,
    db: store,
  }) => {
    // Each docflow lives queued → sent → completed within 200 ms: three items, the later ones
    // coming while the followers change hands.
    sandbox.configure({ lifecycleMs: 100 });
    const a = follow();
    await waitFor(async () => (await readFeedState(store.db)).cursor !== undefined, { ...POLL, what: 'the cursor' });
    for (let i = 0; i < 30; i++) await otherSystem(i);
    await waitFor(async () => (await readFeedState(store.db)).items >= 30, { ...POLL, what: 'thirty items' });
    await a.close();
    for (let i = 30; i < 75; i++) await otherSystem(i);
    follow();
    await waitFor(async () => (await readFeedState(store.db)).items === 225, { ...POLL, what: 'three items of each of 75 docflows' });
    await sleep(300);
    const state = await readFeedState(store.db);
    expect(state).toMatchObject({ items: 225, unknown: 225, resolved: 0, conflicts: 0, cursor: '225' });
    expect(sandbox.stats().docflowStates).toEqual({ completed: 75 });
  });

  it('keeps the feed known up to a moment ago while other systems keep it busy', async ({ sandbox, db: store }) => {
    // Every call takes 100 ms and other systems make about 100 docflows a second: every read
    // of the feed finds new items, none is ever empty.
    sandbox.configure({ latencyMs: 100 });
    follow();
    await waitFor(async () => (await readFeedState(store.db)).cursor !== undefined, { ...POLL, what: 'the cursor' });
    let i = 0;
    const calls: Array<Promise<unknown>> = [];
    const busy = setInterval(() => calls.push(otherSystem(i++)), 10);
    const lags: number[] = [];
    try {
      for (let n = 0; n < 12; n++) {
        await sleep(250);
        lags.push((await store.db.now()) - (await readFeedState(store.db)).coveredAt!);
      }
    } finally {
      clearInterval(busy);
      await Promise.all(calls);
    }
    expect((await readFeedState(store.db)).items).toBeGreaterThan(100);
    // A follower that moved its coverage only on an empty read would fall behind by the whole run.
    expect(Math.max(...lags.slice(4))).toBeLessThan(1500);
  });
});
