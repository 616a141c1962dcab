/**
 * A batch's bank profile (the representative's SNILS and passport) is in Redis only, beside the
 * batch's row in the database: it expires whatever becomes of the load, loaded, loading or
 * failed, and the batch's row says until when (`expires_at`).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { databaseText } from '../../helpers/ledger-rows.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import { createBatchStore } from '../../../src/batch/batch-store.js';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { batchRow } from '../../helpers/batch-rows.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// The file's prefix, client and folder, as before; a database of each test's own.
const it = harness({ per: 'file', each: ['db'], label: 'pd-expiry', redis: { maxRetriesPerRequest: null } });

describe('how long a batch keeps its personal data', () => {
  let profile: BankProfile;

  it.beforeAll(async ({ profile: sample }) => {
    profile = await sample.load();
  });

  it('drops the profile of a batch whose load failed, and expires its keys its retention after the failure', async ({
    redis,
    keys,
    dir,
    db: database,
  }) => {
    // Rows enqueued in chunks of 2, then a quote that never closes: the load fails part-way.
    const id = HEADER.indexOf('dealId');
    const rows = Array.from({ length: 6 }, (_, i) => ROWS[1]!.map((v, j) => (j === id ? `FAILED-${i}` : v)));
    const file = join(dir, 'broken.csv');
    await writeFile(file, `${csvText(rows)}"never closed,${'x,'.repeat(10)}\n`);
    const load = loadBatch({
      file,
      batch: 'broken',
      profile,
      redis,
      keys,
      db: database.db,
      logger: createLogger({ level: 'silent' }),
      retentionMs: HOUR,
      chunkSize: 2,
      rejects: join(dir, 'r.csv'),
    });
    const failedAt = Date.now();
    await expect(load).rejects.toThrow(/cannot be read as CSV/);

    const batch = await batchRow(database.db, 'broken');
    expect(batch?.state).toBe('failed');
    expect(Number(batch?.expires_at)).toBeGreaterThan(failedAt + HOUR - 60_000);
    expect(Number(batch?.expires_at)).toBeLessThanOrEqual(Date.now() + HOUR);
    const meta = await redis.hgetall(keys.batch('broken'));
    expect(meta.profile).toBeUndefined();
    expect(JSON.stringify(meta)).not.toMatch(/13840271548|318264|Григорьева/);
    // What is left of its Redis hash (the database's id, for workers on another one) goes with the batch.
    const ttl = await redis.pttl(keys.batch('broken'));
    expect(ttl).toBeGreaterThan(HOUR - 60_000);
    expect(ttl).toBeLessThanOrEqual(HOUR);
    // Its row index (the jobs it named are gone) expires with it.
    expect(await redis.exists(keys.rows('broken'))).toBe(1);
    expect(await redis.pttl(keys.rows('broken'))).toBeGreaterThan(HOUR - 60_000);
    // The database, which never expires, holds none of the profile's or the rows' persons.
    const { tables, text } = await databaseText(database.db);
    expect(tables).toEqual(
      expect.arrayContaining(['batches', 'deployment', 'docflow_history', 'docflows', 'feed', 'ledger', 'operator_actions', 'outcomes']),
    );
    expect(text).toContain('broken');
    expect(text).not.toMatch(/13840271548|318264|Григорьева|490-905-752|49090575213|Смирнова|СМИРНОВА/i);
  });

  it("expires a loading batch's profile, and each heartbeat of its loader pushes the expiry on", async ({ redis, keys, db: database }) => {
    const store = createBatchStore(redis, keys, database.db);
    await store.open({ id: 'loading', file: 'deals.csv', fingerprint: 'f' }, profile, HOUR);
    const key = keys.batch('loading');
    expect(await redis.hget(key, 'profile')).toContain('Григорьева');
    expect(await redis.pttl(key)).toBeGreaterThan(HOUR - 60_000);

    // A loader that went quiet for most of the hour, then beats again; rows written meanwhile.
    await redis.pexpire(key, 5000);
    await redis.hset(keys.rows('loading'), '1', 'DEAL-1');
    await database.db.kysely
      .updateTable('batches')
      .set({ expires_at: Date.now() + 5000 })
      .where('id', '=', 'loading')
      .execute();
    await store.heartbeat('loading');
    expect(await redis.pttl(key)).toBeGreaterThan(HOUR - 60_000);
    expect(await redis.pttl(keys.rows('loading'))).toBeGreaterThan(HOUR - 60_000);
    // The batch's row (its outcomes' life) moves on with it.
    expect(await store.expiresAt('loading')).toBeGreaterThan(Date.now() + HOUR - 60_000);
  });

  it('never shortens the expiry of a loaded batch that is abandoned later, nor takes its profile from its workers', async ({
    redis,
    keys,
    db: database,
  }) => {
    const store = createBatchStore(redis, keys, database.db);
    await store.open({ id: 'loaded', file: 'deals.csv', fingerprint: 'f' }, profile, HOUR);
    await store.setTotal('loaded', 3, 10 * DAY);
    await store.fail('loaded', 'the file changed after it was taken');
    expect(await redis.pttl(keys.batch('loaded'))).toBeGreaterThan(10 * DAY - 60_000);
    expect(await store.expiresAt('loaded')).toBeGreaterThan(Date.now() + 10 * DAY - 60_000);
    expect(await store.profile('loaded')).toEqual(profile);
    expect((await store.get('loaded'))?.state).toBe('failed');
  });
});
