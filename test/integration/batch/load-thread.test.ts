/**
 * A load reads its input in a worker thread of its own when it runs from the build
 * (src/batch/read-rows.ts): the same rows must come out as when it reads them in its own
 * thread (what the other loader tests, which run the TypeScript source, exercise). Both are
 * run here from the build (dist/, made by `npm test` before vitest), side by side: the jobs,
 * outcomes, rejects file and summary of every fixture shape, the errors of broken files, and
 * a load that fails part-way, which must end its thread.
 */
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import type * as LoadBatchModule from '../../../src/batch/load-batch.js';
import type * as ReadRowsModule from '../../../src/batch/read-rows.js';
import type { LoadContext } from '../../../src/batch/load-context.js';
import { createRedisLoadContext } from '../../../src/batch/redis-load-context.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import { createKeys, type Keys } from '../../../src/redis/keys.js';
import { ROOT } from '../../helpers/cli.js';
import { writeFixtures, type Fixture } from '../../helpers/fixtures.js';
import { storedOutcomes } from '../../helpers/outcomes.js';
import { pauseDealQueue, waitingJobs } from '../../helpers/queue.js';
import { waitFor } from '../../helpers/wait-for.js';
import { harness } from '../../helpers/harness.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

const silent = createLogger({ level: 'silent' });
const built = (path: string): string => pathToFileURL(join(ROOT, 'dist', path)).href;
/** OS threads of this process (Linux): a reading thread is one. */
const threads = async (): Promise<number> => (await readdir('/proc/self/task')).length;

// The file's Redis client (as BullMQ wants it) and folder; each test's prefixes and databases of its own, one each way.
const it = harness({ per: 'file', each: ['prefix', 'db'], label: 'load-thread', redis: { maxRetriesPerRequest: null } });

describe('a load read in a thread of its own (the build)', () => {
  let keys: { thread: Keys; here: Keys };
  // A database for each way too: the batch (and its rows' outcomes) is the database's, and both ways load the same batch id.
  let stores: { thread: UsedDatabase; here: UsedDatabase };
  let redis: Redis;
  let dir: string;
  let profile: BankProfile;
  let fixtures: Fixture[];
  let loading: typeof LoadBatchModule;

  /** The same file loaded both ways, each into a prefix of its own, in chunks of 4 rows (many chunks, the thread waiting for credit). */
  const bothWays = async (file: string, batch: string) => {
    const run = async (how: 'thread' | 'here') => {
      const rejects = join(dir, `${batch}-${how}.rejects${file.endsWith('.csv') ? '.csv' : '.json'}`);
      const summary = await loading.loadBatch({
        file,
        batch,
        profile,
        redis,
        keys: keys[how],
        db: stores[how].db,
        logger: silent,
        rejects,
        chunkSize: 4,
        readInThread: how === 'thread',
        filesRoot: join(ROOT, 'samples'),
      });
      const outcomes = (await storedOutcomes(stores[how].db, batch)).map(({ finishedAt: _at, ...o }) => o);
      const jobs = (await waitingJobs(redis, keys[how], batch)).sort((a, b) => a.row - b.row);
      const written = summary.rejectsFile ? await readFile(summary.rejectsFile) : undefined;
      const { seconds: _s, rejectsFile: _r, ...rest } = summary;
      return { summary: rest, outcomes, jobs, rejects: written };
    };
    return { thread: await run('thread'), here: await run('here') };
  };

  it.beforeAll(async ({ redis: client, dir: folder, profile: sample }) => {
    loading = (await import(built('src/batch/load-batch.js'))) as typeof LoadBatchModule;
    const reading = (await import(built('src/batch/read-rows.js'))) as typeof ReadRowsModule;
    // Else the build has no thread to test (a build from before it, or none: `npm test` builds first).
    expect(reading.canReadInThread()).toBe(true);
    redis = client;
    dir = folder;
    profile = await sample.load();
    fixtures = await writeFixtures(dir);
  });
  it.beforeEach(async ({ keys: madeKeys, openPrefix, db, openDatabase }) => {
    keys = { thread: madeKeys, here: createKeys(openPrefix('load-thread')) };
    stores = { thread: db, here: await openDatabase() };
    // Nothing processes these jobs: the queues stay paused.
    await pauseDealQueue(redis, keys.thread);
    await pauseDealQueue(redis, keys.here);
  });

  it('makes the same jobs, outcomes, rejects file and summary of every fixture shape', async () => {
    expect(fixtures).toHaveLength(7);
    for (const [i, fixture] of fixtures.entries()) {
      const { thread, here } = await bothWays(fixture.file, `shape-${i}`);
      expect({ name: fixture.name, ...thread }).toEqual({ name: fixture.name, ...here });
      // The sample's 24 rows: 21 jobs, 3 refused (samples/README.md), whatever the shape.
      expect({ name: fixture.name, jobs: thread.jobs.length, refused: thread.outcomes.length }).toEqual({
        name: fixture.name,
        jobs: 21,
        refused: 3,
      });
      expect(thread.rejects?.length).toBeGreaterThan(0);
    }
    // Fourteen loads of 24 rows in chunks of 4: over the default 30 s on a busy 2-core machine.
  }, 60_000);

  it('looks at a row’s documents from the thread as from here (one missing file refuses its row)', async () => {
    const file = join(dir, 'deals-with-files.csv');
    await copyFile(join(ROOT, 'samples/deals-with-files.csv'), file);
    for (const name of ['agreement-a.pdf', 'agreement-a.pdf.sig']) await copyFile(join(ROOT, 'samples', name), join(dir, name));
    // agreement-b.pdf is left out: the rows naming it are refused, naming the field.
    const { thread, here } = await bothWays(file, 'files');
    expect(thread).toEqual(here);
    expect(thread.summary.invalidByField).toHaveProperty(['agreementFile']);
    expect(thread.jobs.some((j) => j.deal?.agreement?.file !== undefined)).toBe(true);
  });

  it('stops on a broken file with the same error, class and all, as a load read here', async () => {
    const bad = join(ROOT, 'test/fixtures/bad');
    for (const [i, name] of ['unbalanced-quotes.csv', 'truncated-utf8.csv', 'garbage.csv', 'not-an-array.json', 'empty.csv'].entries()) {
      const failures = await Promise.all(
        (['thread', 'here'] as const).map((how) =>
          loading
            .loadBatch({
              file: join(bad, name),
              batch: `bad-${i}`,
              profile,
              redis,
              keys: keys[how],
              db: stores[how].db,
              logger: silent,
              rejects: join(dir, `bad-${how}.rejects`),
              readInThread: how === 'thread',
            })
            .then(
              () => undefined,
              (err: Error & { code?: string }) => ({ name: err.name, code: err.code, message: err.message }),
            ),
        ),
      );
      expect(failures[0], name).toBeDefined();
      expect(failures[0], name).toEqual(failures[1]);
    }
  });

  it('ends a load of a JSON file at its size on the progress bar, and takes a chunk size of 0 as 1', async () => {
    const json = fixtures.find((f) => f.file.endsWith('.json'))!;
    const seen: Array<{ rows: number; bytes: number; size: number }> = [];
    const summary = await loading.loadBatch({
      file: json.file,
      batch: 'zero',
      profile,
      redis,
      keys: keys.thread,
      db: stores.thread.db,
      logger: silent,
      rejects: join(dir, 'zero.rejects.json'),
      chunkSize: 0,
      readInThread: true,
      onProgress: (p) => seen.push(p),
    });
    expect(summary).toMatchObject({ read: 24, enqueued: 21, invalid: 3 });
    // One report a row (chunks of one), then the end of the file.
    expect(seen).toHaveLength(25);
    expect(seen.at(-1)).toEqual({ rows: 24, bytes: seen.at(-1)!.size, size: seen.at(-1)!.size });
  });

  it('ends its thread when the load fails part-way', async () => {
    const file = fixtures[0]!.file;
    // A load first, so that the threads a process starts once (libuv's pool, V8's) are running.
    await loading.loadBatch({
      file,
      batch: 'warm',
      profile,
      redis,
      keys: keys.thread,
      db: stores.thread.db,
      logger: silent,
      rejects: join(dir, 'warm.rejects'),
      readInThread: true,
    });
    const before = await threads();
    let writes = 0;
    const failing = (): LoadContext => {
      const context = createRedisLoadContext(redis, keys.thread, stores.thread.db);
      const write = context.jobs.write.bind(context.jobs);
      context.jobs.write = async (...args) => {
        if (++writes === 2) throw new Error('the second chunk failed');
        return write(...args);
      };
      return context;
    };
    const load = loading.loadBatchWith(failing, {
      file,
      batch: 'fails',
      profile,
      logger: silent,
      rejects: join(dir, 'fails.rejects'),
      chunkSize: 2,
      readInThread: true,
    });
    await expect(load).rejects.toThrow('the second chunk failed');
    // Without the thread ended, it would wait for a credit for ever: one thread more than before.
    await waitFor(async () => (await threads()) <= before, { timeoutMs: 5_000, intervalMs: 20, what: 'the reading thread to end' });
    expect(await threads()).toBeLessThanOrEqual(before);
  });
});
