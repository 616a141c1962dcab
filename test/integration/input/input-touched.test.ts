/**
 * An input only touched while it is read is the same input (issue 39, point 2): the load notices
 * change by content, not by the file's time. A file whose bytes changed is still refused.
 */
import { appendFileSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { loadProfile, type BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import { createKeys } from '../../../src/redis/keys.js';
import { ROOT } from '../../helpers/cli.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../../helpers/redis.js';
import { useTestDatabase } from '../../helpers/test-db.js';
import { batchRow } from '../../helpers/batch-rows.js';

describe('an input touched or changed while it is loaded', () => {
  const store = useTestDatabase();
  const prefix = uniquePrefix('touched');
  const keys = createKeys(prefix);
  const logger = createLogger({ level: 'silent' });
  let dir: string;
  let redis: Redis;
  let profile: BankProfile;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-touched-'));
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    profile = await loadProfile(join(ROOT, 'samples/bank-profile.json'));
  });
  afterAll(async () => {
    redis.disconnect();
    await deletePrefix(prefix);
    await rm(dir, { recursive: true, force: true });
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
