/**
 * The follower reads the feed on while Redis stores what it read: a page's store is not
 * awaited before the next read, up to `storesAhead` pages behind (a backlog is read at the
 * gateway's pace, not at the pace of its stores). Against the real sandbox and a redis-server
 * of this file's own: `CLIENT PAUSE` holds every client of a server, so it cannot be the
 * shared one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ensureFeed, readFeedState } from '../../src/feed/feed-store.js';
import { startFeedFollower } from '../../src/feed/follower.js';
import { createLogger } from '../../src/logger.js';
import { createKeys } from '../../src/redis/keys.js';
import { createRealtyClient, type RealtyClient } from '../../src/realty/client.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
import { DOCFLOW_PATH, encumbranceRequest, post } from '../helpers/sandbox-http.js';
import { waitFor } from '../helpers/wait-for.js';

const DAY = 24 * 3600 * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the follower reading ahead of its stores', () => {
  let dir: string;
  let server: PrivateRedis;
  let redis: Redis;
  let sandbox: RunningSandbox;
  let client: RealtyClient;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-read-ahead-'));
    server = await startPrivateRedis(dir);
    redis = new Redis(server.url);
    sandbox = await startSandbox({ registry: [] });
    client = createRealtyClient({ baseUrl: sandbox.url, sessionId: 'demo-session', timeoutMs: 5000 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await client?.close();
    await sandbox?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads storesAhead + 1 pages while Redis answers nothing, no more, then stores every item once', async () => {
    const keys = createKeys('read-ahead');
    // A backlog: 1,000 docflows of another system, three items each (queued, sent, completed)
    // once their 50 ms steps are due.
    sandbox.configure({ lifecycleMs: 50 });
    const storesAhead = 5;
    const reads: number[] = [];
    const counted: RealtyClient = {
      ...client,
      news(after) {
        reads.push(performance.now());
        return client.news(after);
      },
    };
    // The cursor first, as a follower's start takes it; the backlog after it; then the follower.
    await ensureFeed(redis, keys, client);
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: `erp-${i + j}` }))),
      );
    }
    await sleep(200);
    const follower = startFeedFollower({
      redis,
      keys,
      client: counted,
      logger: createLogger({ level: 'silent' }),
      ledgerMs: DAY,
      pollMs: 50,
      storesAhead,
    });
    try {
      // Each read takes 10 ms: the backlog's 30 pages take about a third of a second to read.
      sandbox.configure({ latencyMs: 10 });
      await waitFor(async () => (await readFeedState(redis, keys)).items >= 100, {
        timeoutMs: 10_000,
        intervalMs: 5,
        what: 'the first page stored',
      });
      // Redis holds every command for 600 ms; the reads go on until storesAhead stores wait behind the one in Redis.
      const pausedAt = performance.now();
      await redis.call('CLIENT', 'PAUSE', '600', 'ALL');
      await sleep(400);
      const whilePaused = reads.filter((t) => t > pausedAt && t < pausedAt + 400).length;
      // Waiting for each store before the next read but one (the earlier follower) reads 2 pages, 3 at most.
      expect(whilePaused).toBeGreaterThanOrEqual(storesAhead + 1);
      expect(whilePaused).toBeLessThanOrEqual(storesAhead + 3);
      await waitFor(async () => (await readFeedState(redis, keys)).items >= 3000, {
        timeoutMs: 20_000,
        intervalMs: 20,
        what: 'every item stored',
      });
      await sleep(300);
      const state = await readFeedState(redis, keys);
      // Every item once: a page stored twice, or one skipped, would move these off 3,000.
      expect(state).toMatchObject({ items: 3000, unknown: 3000, resolved: 0, conflicts: 0, cursor: '3000' });
    } finally {
      await follower.close();
    }
  });
});
