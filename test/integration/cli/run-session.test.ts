/**
 * A session the gateway refuses (401) in the middle of `run`: the queue paused, the unfinished
 * rows left pending for a later run, nothing created, the session id never printed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Queue } from 'bullmq';
import { describe, expect } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';

// No database of the test's own: the run uses its default place, as it did.
const it = harness({ label: 'session', sandbox: { sessions: ['the-valid-one'] }, engine: 'none' });

describe('a session the gateway refuses (401)', () => {
  it('pauses the queue, exits 1 with unfinished rows pending, creates nothing, never prints the session id', async ({
    sandbox,
    dir,
    prefix,
    keys,
    redis,
  }) => {
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

    const queue = new Queue(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
    try {
      expect(await queue.isPaused()).toBe(true);
      // The unfinished jobs wait, none spent as failed.
      const counts = await queue.getJobCounts('wait', 'failed', 'active');
      expect(counts.failed).toBe(0);
      expect(counts.wait).toBe(rows.filter((r) => r.outcome === 'pending').length);
    } finally {
      await queue.close();
    }
  });
});
