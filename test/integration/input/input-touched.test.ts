/**
 * An input only touched while it is read is the same input (issue 39, point 2): the load notices
 * change by content, not by the file's time. A file whose bytes changed is still refused.
 */
import { appendFileSync, utimesSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { loadBatch } from '../../../src/batch/load-batch.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import type { Keys } from '../../../src/redis/keys.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { harness, type Harness } from '../../helpers/harness.js';
import { batchRow } from '../../helpers/batch-rows.js';

// The file's prefix, client and folder, as before; a database of each test's own.
const it = harness({ per: 'file', each: ['db'], label: 'touched', redis: { maxRetriesPerRequest: null } });

describe('an input touched or changed while it is loaded', () => {
  const logger = createLogger({ level: 'silent' });
  // The file's fixtures and each test's database, named once for `load` below.
  let dir: string;
  let redis: Redis;
  let keys: Keys;
  let profile: BankProfile;
  let store: Harness['db'];

  it.beforeAll(async ({ dir: d, redis: r, keys: k, profile: p }) => {
    [dir, redis, keys, profile] = [d, r, k, await p.load()];
  });
  it.beforeEach(({ db }) => {
    store = db;
  });

  const load = (file: string, batch: string, onProgress: () => void) =>
    loadBatch({ file, batch, profile, redis, keys, db: store.db, logger, rejects: join(dir, `${batch}.rejects.csv`), onProgress });

  it('loads a file whose time moved while it was read and whose bytes did not', async () => {
    const file = join(dir, 'touched.csv');
    await writeFile(file, csvText(ROWS.slice(0, 4)));
    let touched = false;
    const summary = await load(file, 'touched', () => {
      if (touched) return;
      touched = true;
      const later = new Date(Date.now() + 60_000);
      utimesSync(file, later, later);
    });
    expect(touched).toBe(true);
    expect(summary.read).toBe(4);
    expect((await batchRow(store.db, 'touched'))?.state).toBe('loaded');
  });

  it('refuses a file whose bytes changed while it was read, though its size did not', async () => {
    const file = join(dir, 'changed.csv');
    const text = csvText(ROWS.slice(0, 4));
    await writeFile(file, text);
    let changed = false;
    const loading = load(file, 'changed', () => {
      if (changed) return;
      changed = true;
      // The same size, another byte: only the content tells.
      const last = text.at(-2) === 'X' ? 'Y' : 'X';
      writeFileSync(file, `${text.slice(0, -2)}${last}${text.at(-1)}`);
      const later = new Date(Date.now() + 60_000);
      utimesSync(file, later, later);
    });
    await expect(loading).rejects.toThrow(/changed while it was read/);
    expect(changed).toBe(true);
  });

  it('refuses a file that grew while it was read', async () => {
    const file = join(dir, 'grown.csv');
    await writeFile(file, csvText(ROWS.slice(0, 4)));
    let grown = false;
    const loading = load(file, 'grown', () => {
      if (grown) return;
      grown = true;
      appendFileSync(file, `${csvText(ROWS.slice(4, 5)).split('\n').slice(1).join('\n')}`);
    });
    await expect(loading).rejects.toThrow(/changed while it was read/);
  });
});
