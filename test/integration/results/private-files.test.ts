/**
 * Files that hold personal data (issue 39, point 8): created 0600 like the logs (results,
 * attention, rejects; manifests and downloads are in signing.test.ts and gateway-files.test.ts);
 * a FIFO at the default rejects path is refused in one sentence instead of hanging `load`; and
 * the manifests' formula cells are defused the way the results file's are.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { csvText, readCsvLines } from '../../../src/results/docflow-files.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';

const PROFILE = 'samples/bank-profile.json';
const modeOf = async (path: string): Promise<string> => ((await stat(path)).mode & 0o777).toString(8);

// The file's sandbox, prefix and folder, as before; a database of each test's own.
const it = harness({ per: 'file', each: ['db'], label: 'private', sandbox: { sessions: ['s'], egronRegions: ['Республика Крым'] } });

describe('files with personal data', () => {
  it('refuses a FIFO at the default rejects path in one sentence instead of waiting on it', async ({ dir, env }) => {
    await copyFile(join(ROOT, 'samples', 'deals.csv'), join(dir, 'piped.csv'));
    execFileSync('mkfifo', [join(dir, 'piped.rejects.csv')]);
    const result = await runCli(['load', join(dir, 'piped.csv'), '--profile', PROFILE, '--dry-run'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `realty-batch: ${join(dir, 'piped.rejects.csv')} is not a regular file (a pipe, a socket or a folder), so the refused rows were not written: remove it or name another file.\n`,
    );
  });

  it('creates the results, attention and rejects files 0600', async ({ dir, env }) => {
    const out = join(dir, 'results.csv');
    const attention = join(dir, 'attention.csv');
    const rejects = join(dir, 'rejects.csv');
    const run = await runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        PROFILE,
        '--out',
        out,
        '--attention',
        attention,
        '--rejects',
        rejects,
        '--attempts',
        '1',
        '--backoff-ms',
        '10',
      ],
      env,
      120_000,
    );
    expect(run.code, run.stderr).toBe(3);
    expect({ results: await modeOf(out), attention: await modeOf(attention), rejects: await modeOf(rejects) }).toEqual({
      results: '600',
      attention: '600',
      rejects: '600',
    });
  });

  it('writes manifest cells a spreadsheet would run with a leading apostrophe, and reads them back as they were', async ({ dir }) => {
    const path = join(dir, 'manifest.csv');
    const line = { dealId: '-2+3', docflowId: '@SUM(A1)', file: 'f.pdf', type: '=HYPERLINK("http://x","y")' };
    await writeFile(path, csvText([line], ['dealId', 'docflowId', 'file', 'type']));
    const text = await readFile(path, 'utf8');
    expect(text).toContain(`'-2+3,'@SUM(A1),f.pdf,"'=HYPERLINK(""http://x"",""y"")"`);
    expect(await readCsvLines(path)).toEqual([line]);
  });
});
