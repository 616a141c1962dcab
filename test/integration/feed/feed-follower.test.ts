/**
 * The fleet's follower of the gateway's news feed, against the real sandbox, Redis (its lock)
 * and the database (its cursor): one follower at a time, a cursor that survives it, and a
 * coverage that keeps up with a busy feed (without it, every lost answer would wait out the
 * reconcile timeout).
 */
import { Redis } from 'ioredis';
import { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } from 'vitest';
import { readFeedState } from '../../../src/feed/feed-store.js';
import { startFeedFollower, type FeedFollower } from '../../../src/feed/follower.js';
import { createLogger } from '../../../src/logger.js';
import { createKeys, type Keys } from '../../../src/redis/keys.js';
import { createRealtyClient, type RealtyClient } from '../../../src/realty/client.js';
import { startSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { DOCFLOW_PATH, encumbranceRequest, post } from '../../helpers/sandbox-http.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../../helpers/redis.js';
import { useTestDatabase } from '../../helpers/test-db.js';
import { waitFor } from '../../helpers/wait-for.js';

const quiet = createLogger({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the news feed follower', () => {
  const store = useTestDatabase();
  let redis: Redis;
  let sandbox: RunningSandbox;
  let client: RealtyClient;
  let prefix: string;
  let keys: Keys;
  const followers: FeedFollower[] = [];
  const follow = (lockMs = 1000) => {
    const f = startFeedFollower({ redis, keys, db: store.db, client, logger: quiet, pollMs: 50, lockMs });
    followers.push(f);
    return f;
  };
  /** A docflow made by another system on the same account (a requestId that is not ours). */
  const otherSystem = (i: number) => post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: `erp-${i}` }));
  const POLL = { timeoutMs: 10_000, intervalMs: 20 };

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  beforeEach(async () => {
    prefix = uniquePrefix('feed');
    keys = createKeys(prefix);
    sandbox = await startSandbox({ registry: [] });
    client = createRealtyClient({ baseUrl: sandbox.url, sessionId: 'demo-session', timeoutMs: 5000 });
  });
  afterEach(async () => {
    for (const f of followers.splice(0)) await f.close();
    await client.close();
    await sandbox.close();
    await deletePrefix(prefix);
  });
  afterAll(() => {
    redis.disconnect();
  });

  it('is one process at a time: a second stands by, and takes over within seconds of a follower that died', async () => {
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

  it('resumes from its cursor in the database: every item after it is read once, none skipped, across followers', async () => {
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

  it('keeps the feed known up to a moment ago while other systems keep it busy', async () => {
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
