import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createKeys } from '../../src/redis/keys.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';

describe('a session the gateway refuses (401)', () => {
  let sandbox: RunningSandbox;
  let dir: string;
  const prefix = uniquePrefix('session');

  beforeAll(async () => {
    sandbox = await startSandbox({ sessions: ['the-valid-one'] });
    dir = await mkdtemp(join(tmpdir(), 'realty-401-'));
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
    await deletePrefix(prefix);
  });

  it('pauses the queue, exits 1 with unfinished rows pending, creates nothing, never prints the session id', async () => {
    const out = join(dir, 'results.csv');
    const result = await runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--out',
        out,
        '--rejects',
        join(dir, 'rejects.csv'),
        '--batch',
        'refused',
        '--attempts',
        '2',
        '--backoff-ms',
        '50',
      ],
      {
        REDIS_URL,
        REALTY_API_URL: sandbox.url,
        REALTY_SESSION_ID: 'wrong-secret-session',
        REALTY_PREFIX: prefix,
        LOG_LEVEL: 'debug',
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/refused the session \(401\)/);
    expect(result.stderr + result.stdout).not.toContain('wrong-secret-session');

    const rows = parse(readFileSync(out), { columns: true }) as Array<Record<string, string>>;
    expect(rows).toHaveLength(24);
    expect(new Set(rows.map((r) => r.outcome))).toEqual(new Set(['pending', 'invalid']));
    expect(readFileSync(out, 'utf8')).not.toContain('wrong-secret-session');
    expect(sandbox.stats().docflowsCreated).toBe(0);

    const keys = createKeys(prefix);
    const redis = new Redis(REDIS_URL);
    const queue = new Queue(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
    try {
      expect(await queue.isPaused()).toBe(true);
      // The unfinished jobs wait, none spent as failed.
      const counts = await queue.getJobCounts('wait', 'failed', 'active');
      expect(counts.failed).toBe(0);
      expect(counts.wait).toBe(rows.filter((r) => r.outcome === 'pending').length);
    } finally {
      await queue.close();
      redis.disconnect();
    }
  });
});
