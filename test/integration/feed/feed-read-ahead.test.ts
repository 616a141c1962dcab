/**
 * The follower reads the feed on while the database stores what it read: a page's store is not
 * awaited before the next read, up to `storesAhead` pages behind (a backlog is read at the
 * gateway's pace, not at the pace of its stores). Against the real sandbox, Redis (the lock) and
 * PostgreSQL, where another transaction can hold the feed's row (`SELECT … FOR UPDATE`) and so
 * every page's store, while the follower's process goes on (SQLite's wait for another writer
 * holds the whole process: better-sqlite3 waits in the event loop's thread).
 */
import { describe, expect, afterAll } from 'vitest';
import { ensureFeed, readFeedState } from '../../../src/feed/feed-store.js';
import { startFeedFollower } from '../../../src/feed/follower.js';
import { createLogger } from '../../../src/logger.js';
import { createRealtyClient, type RealtyClient } from '../../../src/realty/client.js';
import { harness } from '../../helpers/harness.js';
import { DOCFLOW_PATH, encumbranceRequest, post } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// PostgreSQL, where another transaction can hold the feed's row; a sandbox with an empty registry and its default session.
const it = harness({ per: 'file', label: 'read-ahead', engine: 'postgres', sandbox: { registry: [] } });

describe('the follower reading ahead of its stores', () => {
  let client: RealtyClient;

  it.beforeAll(({ sandbox }) => {
    client = createRealtyClient({ baseUrl: sandbox.url, sessionId: 'demo-session', timeoutMs: 5000 });
  });
  // Before the harness closes the sandbox.
  afterAll(async () => {
    await client?.close();
  });

  it('reads on while the database stores nothing, storesAhead + 1 pages behind and no more, then stores every item once', async ({
    redis,
    keys,
    sandbox,
    db: store,
  }) => {
    // A backlog: 1,000 docflows of another system, three items each (queued, sent, completed)
    // once their 50 ms steps are due.
    sandbox.configure({ lifecycleMs: 50 });
    const storesAhead = 5;
    /** Each read, in the order asked: when, and how many items it gave (once it came). */
    const reads: Array<{ at: number; items?: number }> = [];
    const counted: RealtyClient = {
      ...client,
      news(after) {
        const read: { at: number; items?: number } = { at: performance.now() };
        reads.push(read);
        const page = client.news(after);
        void page.then((p) => (read.items = p.news.length)).catch(() => undefined);
        return page;
      },
    };
    /** The reads whose items are not all stored yet (the feed's items count is the stored pages' sum). */
    const notStored = (stored: number): number => {
      let sum = 0;
      let pages = 0;
      for (const read of reads) {
        if (read.items === undefined || sum + read.items > stored) break;
        sum += read.items;
        pages++;
      }
      return reads.length - pages;
    };
    // The cursor first, as a follower's start takes it; the backlog after it; then the follower.
    await ensureFeed(store.db, client);
    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: `erp-${i + j}` }))),
      );
    }
    await sleep(200);
    const follower = startFeedFollower({
      redis,
      keys,
      db: store.db,
      client: counted,
      logger: createLogger({ level: 'silent' }),
      pollMs: 50,
      storesAhead,
    });
    try {
      // Each read takes 10 ms: the backlog's 30 pages take about a third of a second to read.
      sandbox.configure({ latencyMs: 10 });
      await waitFor(async () => (await readFeedState(store.db)).items >= 100, {
        timeoutMs: 10_000,
        intervalMs: 5,
        what: 'the first page stored',
      });
      // Another transaction holds the feed's row for 600 ms: every page's store waits for it (the
      // compare-and-set on the cursor), and the reads go on until storesAhead stores wait behind the
      // one in the database. (Stores of pages read before may be waiting already: the database
      // stores a page more slowly than Redis did, so it is the pages read and not stored that are counted.)
      let locked!: () => void;
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      const holding = store.db.kysely.transaction().execute(async (trx) => {
        await trx.selectFrom('feed').select('cursor').where('id', '=', 1).forUpdate().execute();
        locked();
        await sleep(600);
      });
      await lockTaken;
      const pausedAt = performance.now();
      await sleep(400);
      const whilePaused = reads.filter((r) => r.at > pausedAt).length;
      const behind = notStored((await readFeedState(store.db)).items);
      // Read on while the database stored nothing.
      expect(whilePaused).toBeGreaterThan(0);
      // Waiting for each store before the next read but one (the earlier follower) leaves 2 pages behind, 3 at most.
      expect(behind).toBeGreaterThanOrEqual(storesAhead + 1);
      expect(behind).toBeLessThanOrEqual(storesAhead + 3);
      await holding;
      await waitFor(async () => (await readFeedState(store.db)).items >= 3000, {
        timeoutMs: 20_000,
        intervalMs: 20,
        what: 'every item stored',
      });
      await sleep(300);
      const state = await readFeedState(store.db);
      // Every item once: a page stored twice, or one skipped, would move these off 3,000.
      expect(state).toMatchObject({ items: 3000, unknown: 3000, resolved: 0, conflicts: 0, cursor: '3000' });
    } finally {
      await follower.close();
    }
  }, 60_000);
});
