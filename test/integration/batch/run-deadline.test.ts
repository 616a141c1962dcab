import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';

const readCsv = readCsvFile;
/** samples/deals.csv's row in an EGRON region: the sandbox answers it 501. */
const CRIMEA_ROW = '24';

// No database of the test's own: the commands use their default place, as they did.
const it = harness({ per: 'file', label: 'deadline', sandbox: { sessions: ['s'], egronRegions: ['Республика Крым'] }, engine: 'none' });

describe('run --deadline: a run that must end before the morning', () => {
  const batch = 'night';
  let env: Record<string, string>;

  it.beforeAll(({ env: harnessEnv }) => {
    env = { ...harnessEnv, LANG: 'C.UTF-8', LC_ALL: '', LC_MESSAGES: '' };
  });

  it('stops waiting for a 501 row at the deadline: that row pending with a hint, the others done, its job kept, exit 3', async ({
    dir,
    redis,
    keys,
  }) => {
    // Ten minutes before the 501 row's second try: only the deadline ends this run.
    const run = await runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        batch,
        '--out',
        join(dir, 'results.csv'),
        '--attention',
        join(dir, 'attention.csv'),
        '--rejects',
        join(dir, 'rejects.csv'),
        '--attempts',
        '8',
        '--backoff-ms',
        '600000',
        '--deadline',
        '8s',
      ],
      env,
    );
    expect(run.stderr).toContain('--deadline came with 1 row pending (1 waiting for a retry');
    expect(run.stderr).toContain(`realty-batch status ${batch}`);
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/time: \d+s, \d+(\.\d)? rows\/s/);

    const results = readCsv(join(dir, 'results.csv'));
    expect(results).toHaveLength(24);
    const crimea = results.find((r) => r.row === CRIMEA_ROW)!;
    expect(crimea.outcome).toBe('pending');
    expect(crimea.errorMessage).toMatch(/^waiting: try 1 failed: 501.*; next try \d{4}-\d\d-\d\dT.*the row's job stays in the queue$/);
    expect(results.filter((r) => r.outcome === 'pending')).toHaveLength(1);

    const attention = readCsv(join(dir, 'attention.csv'));
    const waiting = attention.find((r) => r.row === CRIMEA_ROW)!;
    expect(waiting.outcome).toBe('pending');
    expect(waiting.hint).toBe(
      `not finished by --deadline; its job stays in the queue: start realty-batch work (or run again with --batch ${batch}), then realty-batch results ${batch}; do not load the row again`,
    );
    expect(waiting.errors).toContain('501');

    // The row's job waits in the delayed set for its next try: a later worker finishes it, once.
    expect(await redis.zcard(`${keys.bullPrefix}:${keys.queueName}:delayed`)).toBe(1);

    const status = await runCli(['status', batch], env);
    expect(status.stdout).toContain('waiting for their next try: 1 row, the first at ');
    expect(status.stdout).toMatch(/row 24 \(CRM-2026-000017\): next try \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z; try 1 failed: 501/);
    expect(status.code).toBe(3);

    const json = JSON.parse((await runCli(['status', batch, '--json'], env)).stdout) as {
      rowsPerSecond: number;
      waiting: { count: number; nextTryAt: string; rows: Array<{ row: number; reason: string; nextTryAt: string; attempts: number }> };
    };
    expect(json.waiting.count).toBe(1);
    expect(json.waiting.rows).toHaveLength(1);
    expect(json.waiting.rows[0]).toMatchObject({ row: 24, attempts: 1, nextTryAt: json.waiting.nextTryAt });
    expect(json.waiting.rows[0]!.reason).toMatch(/^try 1 failed: 501/);
    // 23 rows finished in about a second, but the batch has been running for the whole 8 s
    // deadline and more: its pace is over that time, not up to its last outcome.
    expect(json.rowsPerSecond).toBeGreaterThan(0);
    expect(json.rowsPerSecond).toBeLessThan(23 / 6);
    // Its next try is the backoff's: ten minutes ±20 % after the first.
    expect(Date.parse(json.waiting.nextTryAt) - Date.now()).toBeGreaterThan(60_000);
  });

  it('refuses a deadline that is no time, in one sentence, exit 2', async () => {
    const run = await runCli(['run', 'samples/deals.csv', '--profile', 'samples/bank-profile.json', '--deadline', 'tomorrow morning'], env);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('--deadline "tomorrow morning" is not a time, a clock time or a duration');
  });
});
