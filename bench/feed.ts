/**
 * feed-items-ratio: news items the project's follower stores per second, against a bare loop
 * that reads the same pages of the same feed with undici's `request` and `JSON.parse`.
 *
 * The feed is made once: the project's worker (no follower) submits the deals against a
 * sandbox whose docflows live fast (`lifecycleMs`), so each gives three items (queued, sent,
 * completed) and the ledger knows every docflow, as after a night's answers. The cursor is
 * taken before the first deal, as every worker does. Then each run starts from that cursor
 * with nothing followed yet: startFeedFollower, as `track` and every worker run it, reads the
 * backlog page by page (the gateway's page, 100 items) and stores each (each docflow's state
 * in its deal's ledger entry, the gauge, the cursor), until the feed hash counts every item; the bare
 * loop reads the same pages and parses them, nothing stored. Paired runs, the bare one
 * right after the project's.
 */
import { Agent, request } from 'undici';
import { ensureFeed } from '../src/feed/feed-store.js';
import { DEFAULT_STORES_AHEAD, startFeedFollower } from '../src/feed/follower.js';
import { ENTRY_STATE_FIELDS } from '../src/ledger/lua.js';
import { DEFAULT_LEDGER_MS } from '../src/outcomes/store.js';
import type { RedisClient } from '../src/redis/connection.js';
import { createKeys, type Keys } from '../src/redis/keys.js';
import { createRealtyClient, type RealtyClient } from '../src/realty/client.js';
import { NEWS_PATH } from '../src/realty/types.js';
import type { BenchContext } from './context.js';
import { loadDeals, startWorker, untilOutcomes } from './deals.js';
import { collectGarbage, median, progress, ratioFigure, round, type Figure } from './measure.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox.js';

/** Deals whose docflows make the feed (three items each). */
const FEED_DEALS = { quick: 15_000, full: 30_000 };
/** A docflow's step: queued → sent → completed within 2 × this, so the feed is whole soon after the last deal. */
const LIFECYCLE_MS = 100;
const PREFIX = 'bench-feed';

interface FollowerRun {
  itemsPerSecond: number;
  /** Of the run's time, the share spent in `client.news` (the read and its checks); the rest is Redis. */
  readShare: number;
}

/** Stores the whole backlog with the project's follower from the start cursor. */
async function followerRun(ctx: BenchContext, redis: RedisClient, keys: Keys, client: RealtyClient, items: number): Promise<FollowerRun> {
  // The follower gets a connection of its own, as in a worker; the bench watches on another.
  const connection = await ctx.redis.connect();
  let readMs = 0;
  const timed: RealtyClient = {
    ...client,
    async news(after) {
      const started = performance.now();
      try {
        return await client.news(after);
      } finally {
        readMs += performance.now() - started;
      }
    },
  };
  collectGarbage();
  const started = performance.now();
  const follower = startFeedFollower({ redis: connection, keys, client: timed, logger: ctx.logger, ledgerMs: DEFAULT_LEDGER_MS });
  try {
    // The feed hash's `items` counter moves in the same script that stores a page.
    const until = started + 120_000;
    while (Number(await redis.hget(keys.feed, 'items')) < items) {
      if (performance.now() > until) throw new Error(`feed: the follower stored fewer than ${items} items in 120 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const ms = performance.now() - started;
    return { itemsPerSecond: items / (ms / 1000), readShare: readMs / ms };
  } finally {
    await follower.close();
    await connection.quit();
  }
}

/** A news page as both loops read it (JSON.parse, no checks). */
interface RawPage {
  news: Array<{ docflow: { docflowId: string; state: string } }>;
  lastToken: string;
}

/** What a loop does with each page besides reading it (the floor's store), and what it awaits before the clock stops. */
interface PageSink {
  /** Given each page and the token it was read after; a promise returned is awaited before the next read. */
  page(page: RawPage, after: string): Promise<unknown> | undefined;
  settle(): Promise<unknown>;
}

/** Reads the feed from `start` with undici and JSON.parse until `items` were read: items/s. */
async function readPages(sandbox: SandboxProcess, start: string, items: number, side: string, sink?: PageSink): Promise<number> {
  const agent = new Agent({ connections: 2, keepAliveTimeout: 30_000 });
  const headers = { accept: 'application/json', authorization: `auth.sid ${sandbox.sessionId}` };
  collectGarbage();
  const started = performance.now();
  let after = start;
  let read = 0;
  try {
    while (read < items) {
      const response = await request(`${sandbox.url}${NEWS_PATH}?after=${encodeURIComponent(after)}`, { headers, dispatcher: agent });
      const page = JSON.parse(await response.body.text()) as RawPage;
      if (page.news.length === 0) throw new Error(`feed: ${side} found ${read} of ${items} items`);
      const wait = sink?.page(page, after);
      if (wait) await wait;
      read += page.news.length;
      after = page.lastToken;
    }
    await sink?.settle();
    return items / ((performance.now() - started) / 1000);
  } finally {
    await agent.close();
  }
}

/** The same pages with undici and JSON.parse, nothing kept: items/s. */
function bareRun(sandbox: SandboxProcess, start: string, items: number): Promise<number> {
  return readPages(sandbox, start, items, 'the bare loop');
}

/**
 * The floor of what following the feed must do (outside the ratio, in `details`): the bare
 * loop's reads, and each page stored by one small script (the cursor checked and moved, each
 * item's docflow state written), the stores not awaited before the next read, at most
 * STORES_AHEAD in flight, as the follower does. Nothing else of the follower: no ledger entry
 * read, no state order kept, no gauge, no lock. Items/s.
 */
async function floorRun(ctx: BenchContext, sandbox: SandboxProcess, start: string, items: number): Promise<number> {
  const store = (await ctx.redis.connect()) as FloorStore;
  store.defineCommand('floorStorePage', { numberOfKeys: 2, lua: FLOOR_STORE });
  const cursor = `${PREFIX}:floor:cursor`;
  const states = `${PREFIX}:floor:states`;
  await store.set(cursor, start);
  const inFlight = new Set<Promise<unknown>>();
  try {
    return await readPages(sandbox, start, items, 'the floor', {
      page(page, after) {
        const packed = JSON.stringify(page.news.map((item) => [item.docflow.docflowId, item.docflow.state]));
        const stored = store.floorStorePage(cursor, states, after, page.lastToken, packed).then((ok) => {
          if (ok !== 1) throw new Error('feed: the floor found its cursor moved');
        });
        inFlight.add(stored);
        void stored.finally(() => inFlight.delete(stored)).catch(() => undefined);
        return inFlight.size >= STORES_AHEAD ? Promise.race(inFlight) : undefined;
      },
      settle: () => Promise.all(inFlight),
    });
  } finally {
    await store.del(cursor, states);
    await store.quit();
  }
}

/** As the follower's default (`DEFAULT_STORES_AHEAD`): pages stored while the next are read. */
const STORES_AHEAD = DEFAULT_STORES_AHEAD;

/** The floor's store: the page only after the cursor it was read from; each item's state; the cursor moved. */
const FLOOR_STORE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local items = cjson.decode(ARGV[3])
for i = 1, #items do redis.call('HSET', KEYS[2], items[i][1], items[i][2]) end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

type FloorStore = RedisClient & {
  floorStorePage(cursor: string, states: string, after: string, lastToken: string, packed: string): Promise<unknown>;
};

/**
 * Puts the feed back as it was before the first run: the saved hash, no docflow followed
 * (no state in any ledger entry, no docflow hash of its own).
 */
async function resetFeed(redis: RedisClient, keys: Keys, saved: Record<string, string>): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = (await redis.scan(cursor, 'MATCH', keys.docflow('*'), 'COUNT', 5000)) as [string, string[]];
    cursor = next;
    if (found.length > 0) await redis.unlink(...found);
  } while (cursor !== '0');
  do {
    const [next, found] = (await redis.scan(cursor, 'MATCH', keys.ledgerEntry('*', '*'), 'COUNT', 5000)) as [string, string[]];
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of found) pipeline.hdel(key, ...ENTRY_STATE_FIELDS);
    if (found.length > 0) await pipeline.exec();
  } while (cursor !== '0');
  await redis.unlink(keys.feed, keys.docflowStates, keys.feedLock);
  await redis.hset(keys.feed, saved);
}

export async function feedFigure(ctx: BenchContext): Promise<Figure[]> {
  const deals = ctx.full ? FEED_DEALS.full : FEED_DEALS.quick;
  const sandbox = await startSandboxProcess(0);
  const keys = createKeys(PREFIX);
  const redis = await ctx.redis.connect();
  const client = createRealtyClient({ baseUrl: sandbox.url, sessionId: sandbox.sessionId, timeoutMs: 30_000, connections: 2 });
  const project: FollowerRun[] = [];
  const baseline: number[] = [];
  const floor: number[] = [];
  try {
    await sandbox.configure({ lifecycleMs: LIFECYCLE_MS });
    await ensureFeed(redis, keys, client);
    const saved = await redis.hgetall(keys.feed);
    await loadDeals(ctx, redis, keys, deals, 'FD');
    const worker = startWorker(ctx, sandbox, redis, keys, { track: false });
    await untilOutcomes(redis, keys, deals, 300_000);
    await worker.close(5000);
    await new Promise((r) => setTimeout(r, 3 * LIFECYCLE_MS));
    // An untimed read of each side: it publishes every item (the sandbox steps its docflows
    // when the feed is read), counts them, and warms both paths.
    const items = await countItems(sandbox, saved.cursor!);
    const states = (await sandbox.stats()).docflowStates;
    await bareRun(sandbox, saved.cursor!, items);
    await followerRun(ctx, redis, keys, client, items);
    await floorRun(ctx, sandbox, saved.cursor!, items);
    progress(
      `feed: ${deals.toLocaleString('en-US')} docflows (${JSON.stringify(states)}) gave ${items.toLocaleString('en-US')} items; warm-up read each side (and the floor's), not counted`,
    );
    for (let run = 1; run <= ctx.runs; run++) {
      await resetFeed(redis, keys, saved);
      project.push(await followerRun(ctx, redis, keys, client, items));
      baseline.push(await bareRun(sandbox, saved.cursor!, items));
      floor.push(await floorRun(ctx, sandbox, saved.cursor!, items));
      progress(
        `feed run ${run}/${ctx.runs}: follower ${Math.round(project.at(-1)!.itemsPerSecond).toLocaleString('en-US')} items/s (${Math.round(100 * project.at(-1)!.readShare)} % of it reading pages); bare undici + JSON.parse ${Math.round(baseline.at(-1)!).toLocaleString('en-US')} items/s; the floor ${Math.round(floor.at(-1)!).toLocaleString('en-US')} items/s`,
      );
    }
    const followed = Number(await redis.hget(keys.feed, 'followed'));
    if (followed !== items) throw new Error(`feed: ${followed} of ${items} items followed a docflow of ours`);
    const figure = ratioFigure(
      'feed-items-ratio',
      project.map((r) => r.itemsPerSecond),
      baseline,
      'items/s',
      0.8,
      `${items} items (${deals} docflows × queued, sent, completed) read from one cursor, 100 a page: startFeedFollower storing every page (docflow states, gauge, cursor) against undici request + JSON.parse of the same pages; sandbox in its own process at 0 ms; the floor of following (the same reads, each page stored by a minimal script) in details (floorOverBaseline)`,
    );
    return [
      {
        ...figure,
        details: {
          items,
          docflows: deals,
          pageSize: 100,
          lifecycleMs: LIFECYCLE_MS,
          // Of each follower run's time, the share spent reading pages (client.news); the rest is Redis.
          readShare: project.map((r) => round(r.readShare)),
          // The bare loop plus a minimal store of each page (floorRun): what following must cost at least.
          floorItemsPerSecond: floor.map((r) => round(r)),
          floorOverBaseline: round(median(floor.map((r, i) => r / baseline[i]!))),
        },
      },
    ];
  } finally {
    await client.close();
    await redis.quit();
    await ctx.redis.clear(PREFIX);
    await sandbox.stop();
  }
}

/** Every item after `start`, read to the end (it also publishes every pending item). */
async function countItems(sandbox: SandboxProcess, start: string): Promise<number> {
  const headers = { accept: 'application/json', authorization: `auth.sid ${sandbox.sessionId}` };
  let after = start;
  let count = 0;
  for (;;) {
    const response = await request(`${sandbox.url}${NEWS_PATH}?after=${after}&limit=1000`, { headers });
    const page = JSON.parse(await response.body.text()) as { news: unknown[]; lastToken: string };
    if (page.news.length === 0) return count;
    count += page.news.length;
    after = page.lastToken;
  }
}
