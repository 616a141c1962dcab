/**
 * `retry --outcome not_found ambiguous` does not send again rows whose question to the registry
 * is unchanged: it says per row why, counts them, and sends nothing; `--force` sends them
 * (issue 40, point 9). The samples end with one not_found row (12) and two ambiguous (17, 20).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { useTestDatabase } from '../helpers/test-db.js';

describe('retry of the registry answers', { timeout: 90_000 }, () => {
  const prefix = uniquePrefix('retry-unchanged');
  const store = useTestDatabase({ per: 'file' });
  let sandbox: RunningSandbox;
  let dir: string;
  const env = () => ({
    REDIS_URL,
    REALTY_API_URL: sandbox.url,
    REALTY_SESSION_ID: 's',
    REALTY_PREFIX: prefix,
    DATABASE_URL: store.url,
    LOG_LEVEL: 'silent',
  });

  beforeAll(async () => {
    sandbox = await startSandbox({ sessions: ['s'], egronRegions: ['Республика Крым'] });
    dir = await mkdtemp(join(tmpdir(), 'realty-retry-unchanged-'));
    const run = await runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'night',
        '--out',
        join(dir, 'night.csv'),
        '--rejects',
        join(dir, 'rejects.csv'),
        '--feed-lag-ms',
        '200',
        '--attempts',
        '2',
        '--backoff-ms',
        '50',
      ],
      env(),
    );
    expect(run.code, run.stderr).toBe(3);
    // The run alone takes 10 to 25 s on a busy two-core host: more than the hooks' default.
  }, 90_000);
  afterAll(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
    await deletePrefix(prefix);
  });

  it('sends none of the unchanged not_found and ambiguous rows again, saying why for each, and counts them', async () => {
    const suggestsBefore = sandbox.stats().suggestCalls;
    const retried = await runCli(['retry', 'night', '--outcome', 'not_found', 'ambiguous'], env());
    expect(retried.code, retried.stderr).toBe(0);
    const lines = retried.stdout.split('\n');
    expect(lines[0]).toBe(
      'batch night: 0 rows sent around again (not_found, ambiguous); 0 found in the news feed; 0 already on their way; 0 still invalid; 3 selected; 3 unchanged, not sent again (--force sends them)',
    );
    for (const [row, deal, outcome] of [
      [12, 'KZN-2026-000054', 'not_found'],
      [17, 'EKB-2026-000315', 'ambiguous'],
      [20, 'SPB-2026-010080', 'ambiguous'],
    ])
      expect(lines).toContain(
        `  row ${row} (${deal}) ${outcome}: not sent again, the registry already answered this address and would answer the same; correct the row in the attention file and load that, or give --force if the registry changed`,
      );
    const status = JSON.parse((await runCli(['status', 'night', '--json'], env())).stdout) as { outcomes: Record<string, number> };
    expect(status.outcomes).toMatchObject({ not_found: 1, ambiguous: 2 });
    expect(status.outcomes.pending ?? 0).toBe(0);
    expect(sandbox.stats().suggestCalls).toBe(suggestsBefore);
  });

  it('sends them again with --force', async () => {
    const retried = await runCli(['retry', 'night', '--outcome', 'not_found', 'ambiguous', '--force'], env());
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain('batch night: 3 rows sent around again (not_found, ambiguous)');
    expect(retried.stdout).not.toContain('unchanged');
  });
});
