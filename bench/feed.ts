/**
 * feed-items-ratio: news items the project's follower stores per second, against a bare loop
 * that reads the same pages of the same feed with undici's `request` and `JSON.parse`.
 *
 * The feed is made once: the project's worker (no follower) submits the deals against a
 * sandbox whose docflows live fast (`lifecycleMs`), so each gives three items (queued, sent,
 * completed) and the ledger knows every docflow, as after a night's answers. The cursor is
 * taken before the first deal, as every worker does. Then each run starts from that cursor
 * with nothing followed yet: startFeedFollower, as `track` and every worker run it, reads the
 * backlog page by page (the gateway's page, 100 items) and stores each (one transaction in the
 * database: each docflow's state and its history, the cursor, the counters), until the feed's
 * row counts every item; the bare
 * loop reads the same pages and parses them, nothing stored. Paired runs, the bare one
 * right after the project's.
 */
import { Agent, request } from 'undici';
import type { Database } from '../src/db/database.js';
import { keepFeedComplete } from './database.js';
import type { FeedTable } from '../src/db/schema.js';
import type { Selectable } from 'kysely';
import { ensureFeed, readFeedState } from '../src/feed/feed-store.js';
import { DEFAULT_STORES_AHEAD, startFeedFollower } from '../src/feed/follower.js';
import type { RedisClient } from '../src/redis/connection.js';
import { createKeys, type Keys } from '../src/redis/keys.js';
import { createRealtyClient, type RealtyClient } from '../src/realty/client.js';
import { NEWS_PATH } from '../src/domain/gateway.js';
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
  /** Of the run's time, the share spent in `client.news` (the read and its checks); the rest is storing (the database). */
  readShare: number;
}

/** Stores the whole backlog with the project's follower from the start cursor. */
async function followerRun(ctx: BenchContext, keys: Keys, client: RealtyClient, items: number): Promise<FollowerRun> {
  // The follower gets a Redis connection of its own (its lock), as in a worker.
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
  const db = ctx.database.db;
  const follower = startFeedFollower({ redis: connection, keys, db, client: timed, logger: ctx.logger });
  try {
    // The feed row's `items` counter moves in the same transaction that stores a page.
    const until = started + 120_000;
    while ((await readFeedState(db)).items < items) {
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
 * read, no state order kept, no gauge, no lock. The script is Redis's, as when the feed's state
 * was kept there: the follower now stores each page in a database transaction, which this floor
 * does not pay (a floor lower than the follower's own store, not its cost). Items/s.
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
 * Puts the feed back as it was before the first run: the saved row (cursor, counters), no
 * docflow followed (no docflow's state, no history), no follower's lock. The ledger keeps
 * every docflow the worker made, as after a night's answers.
 */
async function resetFeed(redis: RedisClient, keys: Keys, db: Database, saved: Selectable<FeedTable>): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.deleteFrom('docflow_history').execute();
    await trx.deleteFrom('docflows').execute();
    await trx.updateTable('feed').set(saved).where('id', '=', 1).execute();
  });
  await redis.unlink(keys.feedLock);
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
    const db = ctx.database.db;
    await ensureFeed(db, client);
    const saved = await db.kysely.selectFrom('feed').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    await loadDeals(ctx, redis, keys, deals, 'FD');
    // No follower (it would read the backlog): the feed's row is kept read complete for the claims.
    const stopFeed = keepFeedComplete(db);
    const worker = startWorker(ctx, sandbox, redis, keys, { track: false });
    try {
      await untilOutcomes(ctx, redis, keys, deals, 300_000);
    } finally {
      stopFeed();
    }
    await worker.close(5000);
    await new Promise((r) => setTimeout(r, 3 * LIFECYCLE_MS));
    // An untimed read of each side: it publishes every item (the sandbox steps its docflows
    // when the feed is read), counts them, and warms both paths.
    const items = await countItems(sandbox, saved.cursor);
    const states = (await sandbox.stats()).docflowStates;
    await bareRun(sandbox, saved.cursor, items);
    await followerRun(ctx, keys, client, items);
    await floorRun(ctx, sandbox, saved.cursor, items);
    progress(
      `feed: ${deals.toLocaleString('en-US')} docflows (${JSON.stringify(states)}) gave ${items.toLocaleString('en-US')} items; warm-up read each side (and the floor's), not counted`,
    );
    for (let run = 1; run <= ctx.runs; run++) {
      await resetFeed(redis, keys, db, saved);
      project.push(await followerRun(ctx, keys, client, items));
      baseline.push(await bareRun(sandbox, saved.cursor, items));
      floor.push(await floorRun(ctx, sandbox, saved.cursor, items));
      progress(
        `feed run ${run}/${ctx.runs}: follower ${Math.round(project.at(-1)!.itemsPerSecond).toLocaleString('en-US')} items/s (${Math.round(100 * project.at(-1)!.readShare)} % of it reading pages); bare undici + JSON.parse ${Math.round(baseline.at(-1)!).toLocaleString('en-US')} items/s; the floor ${Math.round(floor.at(-1)!).toLocaleString('en-US')} items/s`,
      );
    }
    const { followed } = await readFeedState(db);
    if (followed !== items) throw new Error(`feed: ${followed} of ${items} items followed a docflow of ours`);
    const figure = ratioFigure(
      'feed-items-ratio',
      project.map((r) => r.itemsPerSecond),
      baseline,
      'items/s',
      0.8,
      `${items} items (${deals} docflows × queued, sent, completed) read from one cursor, 100 a page: startFeedFollower storing every page (one SQLite transaction: docflow states and history, cursor, counters) against undici request + JSON.parse of the same pages; sandbox in its own process at 0 ms; the floor of following (the same reads, each page stored by a minimal script) in details (floorOverBaseline)`,
    );
    return [
      {
        ...figure,
        details: {
          items,
          docflows: deals,
          pageSize: 100,
          lifecycleMs: LIFECYCLE_MS,
          // Of each follower run's time, the share spent reading pages (client.news); the rest is the database's.
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
    await ctx.database.clear();
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
