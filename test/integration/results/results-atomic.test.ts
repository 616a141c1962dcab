import { execFileSync } from 'node:child_process';
import { lstat, mkdtemp, readdir, readFile, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { describe, expect, afterAll } from 'vitest';
import { OutputError } from '../../../src/errors.js';
import { createOutcomeStore } from '../../../src/outcomes/store.js';
import type { Keys } from '../../../src/redis/keys.js';
import { writeResults } from '../../../src/results/write-results.js';
import { harness, type Harness } from '../../helpers/harness.js';
import type { Database } from '../../../src/db/database.js';

/** Three pages of 1,000 outcomes: the writer is well into the file when the second page is read. */
const ROWS = 2500;
const PREVIOUS = 'row,dealId,outcome\n1,D-1,queued\n';

const temporaries = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((name) => name.endsWith('.tmp'));

/** The same database, except that each read of the outcomes table (a page) calls `onPage(n)` first (n from 1), which may throw. */
function instrumented(db: Database, onPage: (n: number) => void): Database {
  let pages = 0;
  const kysely = new Proxy(db.kysely, {
    get(target, prop) {
      if (prop === 'selectFrom') {
        return (...args: Parameters<Database['kysely']['selectFrom']>) => {
          if (args[0] === 'outcomes') onPage(++pages);
          return target.selectFrom(...args);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ...db, kysely, transaction: db.transaction.bind(db), now: db.now.bind(db), close: db.close.bind(db) };
}

/** A tmpfs of 64 KiB: a real "no space left on device". Only where this process may mount (root in a container). */
async function mountTiny(): Promise<string | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'realty-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    await rmdir(dir);
    return undefined;
  }
}

const tiny = await mountTiny();

// The file's prefix, client and database, as before; a folder of each test's own.
const it = harness({ per: 'file', each: ['dir'], label: 'results-atomic' });

describe('the results file, written whole or not at all', () => {
  // The file's fixtures and each test's folder, named once for the tests below.
  let redis: Redis;
  let keys: Keys;
  let database: Harness['db'];
  let dir: string;

  it.beforeAll(async ({ redis: r, keys: k, db }) => {
    [redis, keys, database] = [r, k, db];
    const outcomes = createOutcomeStore(redis, keys, { db: database.db });
    for (let from = 1; from <= ROWS; from += 500) {
      await Promise.all(
        Array.from({ length: 500 }, (_, i) =>
          outcomes.record('b', {
            row: from + i,
            dealId: `D-${from + i}`,
            outcome: 'queued',
            docflowId: `f-${from + i}`,
            httpStatus: 200,
            attempts: 1,
            finishedAt: '2026-11-21T01:00:00.000Z',
          }),
        ),
      );
    }
  });
  it.beforeEach(({ dir: d }) => {
    dir = d;
  });

  it('keeps the previous file intact, and leaves no temporary file, when the database fails on the second page', async () => {
    const out = join(dir, 'results.csv');
    await writeFile(out, PREVIOUS);
    const failing = instrumented(database.db, (n) => {
      if (n === 2) throw new Error('Connection terminated unexpectedly');
    });
    await expect(writeResults({ redis, keys, db: failing, batch: 'b', total: ROWS, out })).rejects.toThrow(
      'Connection terminated unexpectedly',
    );
    expect(await readFile(out, 'utf8')).toBe(PREVIOUS);
    expect(await temporaries(dir)).toEqual([]);
  });

  it('keeps the previous file when the caller aborts part-way', async () => {
    const out = join(dir, 'results.jsonl');
    await writeFile(out, PREVIOUS);
    const stop = new AbortController();
    const aborting = instrumented(database.db, (n) => {
      if (n === 2) stop.abort(new Error('the worker is shutting down'));
    });
    await expect(writeResults({ redis, keys, db: aborting, batch: 'b', total: ROWS, out, signal: stop.signal })).rejects.toThrow(
      'the worker is shutting down',
    );
    expect(await readFile(out, 'utf8')).toBe(PREVIOUS);
    expect(await temporaries(dir)).toEqual([]);
  });

  it('replaces a symlink at the results name instead of writing through it', async () => {
    const elsewhere = join(dir, 'elsewhere.csv');
    const out = join(dir, 'results.csv');
    await writeFile(elsewhere, PREVIOUS);
    await symlink(elsewhere, out);
    const summary = await writeResults({ redis, keys, db: database.db, batch: 'b', total: ROWS, out });
    expect(summary.rows).toBe(ROWS);
    expect(await readFile(elsewhere, 'utf8')).toBe(PREVIOUS);
    expect((await lstat(out)).isSymbolicLink()).toBe(false);
    expect((await readFile(out, 'utf8')).trimEnd().split('\n')).toHaveLength(ROWS + 1);
    expect(await temporaries(dir)).toEqual([]);
  });

  describe('on a disk that fills up', () => {
    afterAll(() => {
      if (!tiny) return;
      execFileSync('umount', [tiny]);
      return rmdir(tiny);
    });

    it.runIf(tiny).each(['results.csv', 'results.jsonl'])(
      'stops %s with one sentence naming the file, without hanging, and keeps the previous file',
      { timeout: 5000 },
      async (name) => {
        const out = join(tiny!, name);
        await writeFile(out, PREVIOUS);
        const err = await writeResults({ redis, keys, db: database.db, batch: 'b', total: ROWS, out }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(OutputError);
        expect((err as OutputError).message).toBe(
          `Could not write ${out} (no space left on device); the previous file, if any, is unchanged.`,
        );
        expect(await readFile(out, 'utf8')).toBe(PREVIOUS);
        expect(await temporaries(tiny!)).toEqual([]);
        await rm(out);
      },
    );
  });
});
