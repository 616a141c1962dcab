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
import { CompiledQuery } from 'kysely';
import { parseRequestId } from '../src/ledger/entry.js';
import type { RedisClient } from '../src/redis/connection.js';
import { createKeys, type Keys } from '../src/redis/keys.js';
import { createRealtyClient, type RealtyClient } from '../src/realty/client.js';
import { NEWS_PATH } from '../src/domain/gateway.js';
import type { BenchContext } from './context.js';
import { loadDeals, startWorker, untilOutcomes } from './deals.js';
import { collectGarbage, median, progress, ratioFigure, round, type Figure } from './measure.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox.js';

/**
 * Deals whose docflows make the feed (three items each). The quick profile's 10,000 give about
 * 28,000 items: two seconds of the follower a run on SQLite, long enough that its start and end
 * (the lock, the last store's answer) weigh little.
 */
const FEED_DEALS = { quick: 10_000, full: 30_000 };
/** A docflow's step: queued → sent → completed within 2 × this, so the feed is whole soon after the last deal. */
const LIFECYCLE_MS = 100;
const PREFIX = 'bench-feed';

interface FollowerRun {
  itemsPerSecond: number;
  /** Of the run's time, the share spent in the pages' transactions (the database's statements and commits). */
  dbShare: number;
  /** This process's CPU (user + system, every thread) an item, µs. */
  cpuUsPerItem: number;
}

/** Stores the whole backlog with the project's follower from the start cursor. */
async function followerRun(ctx: BenchContext, keys: Keys, client: RealtyClient, items: number): Promise<FollowerRun> {
  // The follower gets a Redis connection of its own (its lock), as in a worker.
  const connection = await ctx.redis.connect();
  let dbMs = 0;
  const db: Database = {
    ...ctx.database.db,
    async transaction(fn) {
      const started = performance.now();
      try {
        return await ctx.database.db.transaction(fn);
      } finally {
        dbMs += performance.now() - started;
      }
    },
  };
  collectGarbage();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const follower = startFeedFollower({ redis: connection, keys, db, client, logger: ctx.logger });
  try {
    // The feed row's `items` counter moves in the same transaction that stores a page.
    const until = started + 120_000;
    while ((await readFeedState(db)).items < items) {
      if (performance.now() > until) throw new Error(`feed: the follower stored fewer than ${items} items in 120 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const ms = performance.now() - started;
    return { itemsPerSecond: items / (ms / 1000), dbShare: dbMs / ms, cpuUsPerItem: cpuUs(cpu) / items };
  } finally {
    await follower.close();
    await connection.quit();
  }
}

/** A news page as both loops read it (JSON.parse, no checks). */
interface RawPage {
  news: Array<{ date: string; docflow: { docflowId: string; state: string; requestId?: string } }>;
  lastToken: string;
}

/** What a loop does with each page besides reading it (the floor's store), and what it awaits before the clock stops. */
interface PageSink {
  /** Given each page and the token it was read after; a promise returned is awaited before the next read. */
  page(page: RawPage, after: string): Promise<unknown> | undefined;
  settle(): Promise<unknown>;
}

/** A loop's items/s, and this process's CPU (user + system, every thread) an item, µs. */
interface Rate {
  itemsPerSecond: number;
  cpuUsPerItem: number;
}

/** µs of this process's CPU since `since`. */
const cpuUs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** Reads the feed from `start` with undici and JSON.parse until `items` were read. */
async function readPages(sandbox: SandboxProcess, start: string, items: number, side: string, sink?: PageSink): Promise<Rate> {
  const agent = new Agent({ connections: 2, keepAliveTimeout: 30_000 });
  const headers = { accept: 'application/json', authorization: `auth.sid ${sandbox.sessionId}` };
  collectGarbage();
  const cpu = process.cpuUsage();
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
    return { itemsPerSecond: items / ((performance.now() - started) / 1000), cpuUsPerItem: cpuUs(cpu) / items };
  } finally {
    await agent.close();
  }
}

/** The same pages with undici and JSON.parse, nothing kept. */
function bareRun(sandbox: SandboxProcess, start: string, items: number): Promise<Rate> {
  return readPages(sandbox, start, items, 'the bare loop');
}

/**
 * The floor of what following the feed must do, on the project's own database (issue 43, point
 * 3: the floor writes to the same engine as the follower, in the same run): the bare loop's
 * reads, and each page stored in one transaction of the project's database: the feed's cursor
 * moved by a compare-and-set (its fence) with its item count, each item's docflow state
 * written to `docflows` and each state to `docflow_history` (the record the guarantees keep), in
 * the project's tables with their indexes, and each item's deal's ledger entry read in the same
 * transaction (its state and docflow: matching every item to its deal is what the follower
 * promises, and what finds a lost answer or the database restored from an older copy). The
 * stores are not awaited before the next read, at most STORES_AHEAD in flight, as the follower
 * does. Nothing else of the follower: no decision made with the entries (no lost answer entered,
 * no conflict kept), no requirement or payment kept, no lag measured, no restore evidence
 * written, no lock, no Redis.
 */
async function floorRun(db: Database, sandbox: SandboxProcess, start: string, items: number): Promise<Rate> {
  const inFlight = new Set<Promise<unknown>>();
  let last: Promise<unknown> = Promise.resolve();
  return readPages(sandbox, start, items, 'the floor', {
    page(page, after) {
      // Back to back, each begun once the one before it ended, as the follower's stores.
      // Begun after undici has written the next read (in the check phase), as the follower's.
      const stored = last.then(() => new Promise((resolve) => setImmediate(resolve))).then(() => storeFloorPage(db, page, after));
      last = stored;
      inFlight.add(stored);
      void stored.finally(() => inFlight.delete(stored)).catch(() => undefined);
      return inFlight.size >= STORES_AHEAD ? Promise.race(inFlight) : undefined;
    },
    settle: () => Promise.all(inFlight),
  });
}

/** As the follower's default (`DEFAULT_STORES_AHEAD`): pages stored while the next are read. */
const STORES_AHEAD = DEFAULT_STORES_AHEAD;

/** What the floor writes, in `details`. */
const FLOOR_WRITES =
  "one transaction a page on the follower's database: the feed row's cursor compare-and-set and item count, the ledger entries (state, docflow) of the page's deals read by key, each docflow's state upserted into docflows (id, deal, requestId, state, its date) and each state inserted into docflow_history";

/** One page of the floor: one transaction, four statements (their SQL kept per length, as the follower's). */
async function storeFloorPage(db: Database, page: RawPage, after: string): Promise<void> {
  const now = Date.now();
  const last = new Map<string, RawPage['news'][number]>();
  for (const item of page.news) last.set(item.docflow.docflowId, item);
  const docflows: unknown[] = [];
  const deals = new Set<string>();
  let bank: string | undefined;
  let type: string | undefined;
  for (const { docflow, date } of last.values()) {
    const ours = docflow.requestId ? parseRequestId(docflow.requestId) : undefined;
    if (!ours) throw new Error(`feed: the floor read docflow ${docflow.docflowId} without a requestId of ours`);
    // The bench's deals are one bank's registrations: one bank and type a page, as the follower's common case.
    if ((bank ??= ours.bank) !== ours.bank || (type ??= ours.type) !== ours.type)
      throw new Error('feed: the floor read a page of several banks or types');
    deals.add(ours.dealId);
    docflows.push(docflow.docflowId, ours.bank, ours.type, ours.dealId, ours.n, docflow.requestId, docflow.state, date, now);
  }
  const history = page.news.flatMap(({ docflow, date }) => [docflow.docflowId, docflow.state, date, now]);
  const sql = floorStatements(db.engine, last.size, page.news.length, deals.size);
  await db.transaction(async (trx) => {
    const moved = await trx.executeQuery(CompiledQuery.raw(sql.cursor, [page.lastToken, page.news.length, after]));
    if (Number(moved.numAffectedRows) !== 1) throw new Error('feed: the floor found its cursor moved');
    const entries = await trx.executeQuery(CompiledQuery.raw(sql.entries, [bank, type, ...deals]));
    if (entries.rows.length !== deals.size)
      throw new Error(`feed: the floor found ${deals.size - entries.rows.length} deals the ledger lacks`);
    await trx.executeQuery(CompiledQuery.raw(sql.docflows, docflows));
    await trx.executeQuery(CompiledQuery.raw(sql.history, history));
  });
}

interface FloorStatements {
  cursor: string;
  entries: string;
  docflows: string;
  history: string;
}

const floorSql = new Map<string, FloorStatements>();

/** The floor's statements for a page of `docflows` docflows of `deals` deals and `items` items, in the engine's placeholders. */
function floorStatements(engine: Database['engine'], docflows: number, items: number, deals: number): FloorStatements {
  const name = `${engine}:${docflows}:${items}:${deals}`;
  let kept = floorSql.get(name);
  if (kept) return kept;
  let at = 0;
  const place = () => (engine === 'postgres' ? `$${++at}` : '?');
  const list = (count: number) => Array.from({ length: count }, place).join(', ');
  const rows = (count: number, width: number) => Array.from({ length: count }, () => `(${list(width)})`).join(', ');
  const cursor = `update feed set cursor = ${place()}, items = items + ${place()} where id = 1 and cursor = ${place()}`;
  at = 0;
  const entries = `select deal_id, state, docflow_id from ledger where bank = ${place()} and type = ${place()} and deal_id in (${list(deals)})`;
  at = 0;
  const upsert = `insert into docflows (docflow_id, bank, type, deal_id, n, request_id, st, sat, updated_at) values ${rows(docflows, 9)} on conflict (docflow_id) do update set st = excluded.st, sat = excluded.sat, updated_at = excluded.updated_at`;
  at = 0;
  const history = `insert into docflow_history (docflow_id, st, sat, seen_at) values ${rows(items, 4)} on conflict do nothing`;
  kept = { cursor, entries, docflows: upsert, history };
  floorSql.set(name, kept);
  return kept;
}

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
  const bare: Rate[] = [];
  const floors: Rate[] = [];
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
    await resetFeed(redis, keys, db, saved);
    await floorRun(db, sandbox, saved.cursor, items);
    progress(
      `feed: ${deals.toLocaleString('en-US')} docflows (${JSON.stringify(states)}) gave ${items.toLocaleString('en-US')} items; warm-up read each side (and the floor's), not counted`,
    );
    for (let run = 1; run <= ctx.runs; run++) {
      await resetFeed(redis, keys, db, saved);
      project.push(await followerRun(ctx, keys, client, items));
      const { followed } = await readFeedState(db);
      if (followed !== items) throw new Error(`feed: ${followed} of ${items} items followed a docflow of ours`);
      bare.push(await bareRun(sandbox, saved.cursor, items));
      await resetFeed(redis, keys, db, saved);
      floors.push(await floorRun(db, sandbox, saved.cursor, items));
      const [p, b, f] = [project.at(-1)!, bare.at(-1)!, floors.at(-1)!];
      progress(
        `feed run ${run}/${ctx.runs}: follower ${Math.round(p.itemsPerSecond).toLocaleString('en-US')} items/s (${Math.round(p.cpuUsPerItem)} µs CPU an item, ${Math.round(100 * p.dbShare)} % of its time in its transactions); bare undici + JSON.parse ${Math.round(b.itemsPerSecond).toLocaleString('en-US')} items/s; the floor on ${db.engine} ${Math.round(f.itemsPerSecond).toLocaleString('en-US')} items/s (${Math.round(f.cpuUsPerItem)} µs CPU an item)`,
      );
    }
    const baseline = bare.map((r) => r.itemsPerSecond);
    const floor = floors.map((r) => r.itemsPerSecond);
    const figure = ratioFigure(
      'feed-items-ratio',
      project.map((r) => r.itemsPerSecond),
      baseline,
      'items/s',
      0.8,
      `${items} items (${deals} docflows × queued, sent, completed) read from one cursor, 100 a page: startFeedFollower storing every page (one SQLite transaction: docflow states and history, cursor, counters) against undici request + JSON.parse of the same pages; sandbox in its own process at 0 ms; the floor of following on the same database (feed-items-over-floor) in details (floorOverBaseline)`,
    );
    const overFloor = ratioFigure(
      'feed-items-over-floor',
      project.map((r) => r.itemsPerSecond),
      floor,
      'items/s',
      0.9,
      `the same follower runs over the floor of following, run after each (the same reads, each page stored in one transaction of the same ${db.engine} database: the cursor's compare-and-set, the page's deals' ledger entries read, each docflow's state and its history; nothing else of the follower)`,
    );
    return [
      {
        ...overFloor,
        details: {
          floorEngine: db.engine,
          floorWrites: FLOOR_WRITES,
          bareOverFloor: round(median(baseline.map((b, i) => b / floor[i]!))),
          // This process's CPU an item (µs), each run: the follower's, the floor's, and their ratio (median).
          cpuUsPerItem: project.map((r) => round(r.cpuUsPerItem)),
          floorCpuUsPerItem: floors.map((r) => round(r.cpuUsPerItem)),
          cpuOverFloor: round(median(project.map((r, i) => r.cpuUsPerItem / floors[i]!.cpuUsPerItem))),
        },
      },
      {
        ...figure,
        details: {
          items,
          docflows: deals,
          pageSize: 100,
          lifecycleMs: LIFECYCLE_MS,
          // Of each follower run's time, the share spent in the pages' transactions (statements and commits).
          dbShare: project.map((r) => round(r.dbShare)),
          // The bare loop plus each page stored on the same database (floorRun): what following must cost at least.
          floorEngine: db.engine,
          floorItemsPerSecond: floor.map((r) => round(r)),
          bareCpuUsPerItem: bare.map((r) => round(r.cpuUsPerItem)),
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
