/**
 * `retry --outcome not_found ambiguous` does not send again rows whose question to the registry
 * is unchanged: it says per row why, counts them, and sends nothing; `--force` sends them
 * (issue 40, point 9). The samples end with one not_found row (12) and two ambiguous (17, 20).
 */
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';

// The file's tests retry the one batch its run left, in order.
const it = harness({ per: 'file', label: 'retry-unchanged', sandbox: { sessions: ['s'], egronRegions: ['Республика Крым'] } });

describe('retry of the registry answers', { timeout: 90_000 }, () => {
  it.beforeAll(async ({ dir, env }) => {
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
      env,
    );
    expect(run.code, run.stderr).toBe(3);
    // The run alone takes 10 to 25 s on a busy two-core host: more than the hooks' default.
  }, 90_000);

  it('sends none of the unchanged not_found and ambiguous rows again, saying why for each, and counts them', async ({ sandbox, env }) => {
    const suggestsBefore = sandbox.stats().suggestCalls;
    const retried = await runCli(['retry', 'night', '--outcome', 'not_found', 'ambiguous'], env);
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
    const status = JSON.parse((await runCli(['status', 'night', '--json'], env)).stdout) as { outcomes: Record<string, number> };
    expect(status.outcomes).toMatchObject({ not_found: 1, ambiguous: 2 });
    expect(status.outcomes.pending ?? 0).toBe(0);
    expect(sandbox.stats().suggestCalls).toBe(suggestsBefore);
  });

  it('sends them again with --force', async ({ env }) => {
    const retried = await runCli(['retry', 'night', '--outcome', 'not_found', 'ambiguous', '--force'], env);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain('batch night: 3 rows sent around again (not_found, ambiguous)');
    expect(retried.stdout).not.toContain('unchanged');
  });
});
