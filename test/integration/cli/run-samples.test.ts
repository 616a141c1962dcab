/**
 * `realty-batch run` on the samples through real Redis and the real sandbox: every row ends as
 * samples/README.md says, and the same deals in a later batch send nothing again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect } from 'vitest';
import { RESULTS_FILE_COLUMNS } from '../../../src/domain/outcome.js';
// @ts-expect-error: a plain .mjs module shared with the demo, without types
import { compareWithExpected, readExpectedOutcomes } from '../../../scripts/sample-expectations.mjs';
import { ROOT, runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';

// One sandbox, prefix and folder for the file: the second run finds the first one's deals. No
// database of its own (the run's default place); the session the demo gives.
const it = harness({
  per: 'file',
  label: 'samples',
  sandbox: { egronRegions: ['Республика Крым'] },
  engine: 'none',
  session: 'demo-session',
  logLevel: 'warn',
});

describe('realty-batch run on the samples, through real Redis and the real sandbox', () => {
  it('ends every row as samples/README.md says, sends no requestId twice, and exits 3', async ({ sandbox, dir, env }) => {
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
        'samples-1',
        '--attempts',
        '3',
        '--backoff-ms',
        '50',
      ],
      env,
    );
    expect(result.stderr).not.toContain('demo-session');
    expect(result.code).toBe(3);

    const text = readFileSync(out, 'utf8');
    expect(text.split('\n')[0]).toBe(RESULTS_FILE_COLUMNS.join(','));
    const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
    const expected = readExpectedOutcomes(join(ROOT, 'samples/README.md')) as Map<number, { dealId: string; outcome: string }>;
    expect(rows).toHaveLength(expected.size);
    expect(compareWithExpected(expected, rows)).toEqual([]);

    const submitted = rows.filter((r) => r.outcome === 'queued' || r.outcome === 'suspended');
    const stats = sandbox.stats();
    expect(stats.repeatedRequestIds).toBe(0);
    expect(stats.docflowsCreated).toBe(submitted.length);
    // Every docflow the sandbox created is one row's docflowId.
    expect(new Set(sandbox.docflows().map((d) => d.docflowId))).toEqual(new Set(submitted.map((r) => r.docflowId)));
    for (const r of rows.filter((r) => r.outcome === 'unavailable')) expect(Number(r.attempts)).toBe(3);
    for (const r of rows.filter((r) => r.outcome === 'queued')) expect(r.httpStatus).toBe('200');
    for (const r of rows.filter((r) => r.outcome === 'suspended')) expect(r.httpStatus).toBe('201');
    for (const r of rows.filter((r) => r.outcome === 'ambiguous'))
      expect(r.errorMessage).toMatch(/\d{2}:\d{2}:\d{6,7}:\d+.*\d{2}:\d{2}:\d{6,7}:\d+/);
  });

  it('sends nothing again when the same deals run in a later batch: already_submitted with the earlier docflowId', async ({
    sandbox,
    dir,
    env,
  }) => {
    const before = sandbox.stats().docflowsCreated;
    const out = join(dir, 'again.csv');
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
        'samples-2',
        '--attempts',
        '2',
        '--backoff-ms',
        '50',
      ],
      env,
    );
    expect(result.code).toBe(3);
    const first = parse(readFileSync(join(dir, 'results.csv')), { columns: true }) as Array<Record<string, string>>;
    const again = parse(readFileSync(out), { columns: true }) as Array<Record<string, string>>;
    expect(sandbox.stats().docflowsCreated).toBe(before);
    for (const [i, row] of first.entries()) {
      if (row.outcome === 'queued' || row.outcome === 'suspended') {
        expect(again[i]!.outcome).toBe('already_submitted');
        expect(again[i]!.docflowId).toBe(row.docflowId);
      }
    }
  });
});
