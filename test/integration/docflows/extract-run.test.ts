/**
 * `run --type extract` from the command line, through real Redis, SQLite and the real sandbox
 * over HTTP: extracts ordered by cadastral number or by address, followed to `completed`,
 * downloaded by `documents`; the same extract of a deal ordered once a day unless `--again`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, describe, expect } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { parseRequestId } from '../../../src/ledger/entry.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';

// One sandbox, prefix and folder for the file, as before; no database of its own (the commands'
// default place).
const it = harness({ per: 'file', label: 'extract', sandbox: { sessions: ['s'], lifecycleMs: 100 }, engine: 'none', logLevel: 'warn' });

describe('realty-batch run --type extract', () => {
  // The file's fixtures, named once for the helpers below.
  let sandbox: RunningSandbox;
  let dir: string;
  let env: Record<string, string>;
  let tracker: ChildProcess | undefined;
  // One object by its cadastral number, one by its address (samples/README.md: suggest finds one object for it).
  const objects = [
    { dealId: 'MSK-2026-004511', cadastralNumber: '77:06:0005011:2376', extractType: 'ownership' },
    {
      dealId: 'NSK-2026-000123',
      region: 'Новосибирская область',
      city: 'Новосибирск',
      street: 'Челюскинцев',
      house: '14',
      apartment: '81',
    },
  ];
  const run = (batch: string, ...more: string[]) =>
    runCli(
      [
        'run',
        join(dir, 'objects.csv'),
        '--type',
        'extract',
        '--profile',
        join(ROOT, 'samples/bank-profile.json'),
        '--batch',
        batch,
        '--out',
        join(dir, `${batch}.csv`),
        ...more,
      ],
      env,
    );
  const objectRequests = () => sandbox.docflows().filter((d) => d.type === 'object_request');

  it.beforeAll(async ({ sandbox: s, dir: d, env: e }) => {
    [sandbox, dir, env] = [s, d, e];
    await writeFile(
      join(dir, 'objects.csv'),
      stringify(objects, {
        header: true,
        columns: ['dealId', 'cadastralNumber', 'region', 'city', 'street', 'house', 'apartment', 'extractType'],
      }),
    );
  });
  // Before the harness closes the sandbox and deletes the prefix the tracker follows.
  afterAll(() => {
    tracker?.kill('SIGKILL');
  });

  it('orders each extract, follows it to completed, and documents downloads the extract of its type', async () => {
    const ordered = await run('objects-1');
    expect(ordered.code, ordered.stderr).toBe(0);
    const rows = readCsvFile(join(dir, 'objects-1.csv'));
    expect(rows.map((r) => [r.dealId, r.outcome, r.type, r.cadastralNumber])).toEqual([
      ['MSK-2026-004511', 'queued', 'object_request', '77:06:0005011:2376'],
      ['NSK-2026-000123', 'queued', 'object_request', expect.stringMatching(/^\d+:\d+:\d+:\d+$/)],
    ]);
    for (const r of rows)
      expect(parseRequestId(r.requestId!)?.dealId).toMatch(new RegExp(`^${r.dealId}\\|(info|ownership)\\|\\d{4}-\\d{2}-\\d{2}$`));

    tracker = spawn(process.execPath, [CLI, 'track', '--poll-ms', '50'], { cwd: ROOT, env: childEnv(env), stdio: 'ignore' });
    await waitFor(
      async () => {
        const status = JSON.parse((await runCli(['status', 'objects-1', '--json'], env)).stdout) as { states: Record<string, number> };
        return (status.states.completed ?? 0) === 2;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'both extracts to complete' },
    );
    const documents = await runCli(['documents', 'objects-1', '--dir', join(dir, 'docs')], env, 120_000);
    expect(documents.code, documents.stderr).toBe(0);
    const manifest = readCsvFile(join(dir, 'docs', 'manifest.csv'));
    const typesOf = (dealId: string) => manifest.filter((m) => m.dealId === dealId).map((m) => m.type);
    expect(typesOf('MSK-2026-004511')).toEqual(
      expect.arrayContaining([expect.stringMatching(/extract_ownership:xml$/), expect.stringMatching(/extract_ownership:pdf$/)]),
    );
    expect(typesOf('NSK-2026-000123')).toEqual(expect.arrayContaining([expect.stringMatching(/extract_info:xml$/)]));
    const xml = manifest.find((m) => m.dealId === 'MSK-2026-004511' && /xml$/.test(m.type!))!;
    expect(readFileSync(join(dir, 'docs', xml.dealId!, xml.file!), 'utf8')).toContain('77:06:0005011:2376');
  });

  it('orders the same extracts once a day: another batch of them is already_submitted, and --again orders them anew', async () => {
    const first = readCsvFile(join(dir, 'objects-1.csv'));
    const again = await run('objects-2');
    expect(again.code, again.stderr).toBe(0);
    expect(readCsvFile(join(dir, 'objects-2.csv')).map((r) => [r.outcome, r.docflowId])).toEqual(
      first.map((r) => ['already_submitted', r.docflowId]),
    );
    expect(objectRequests()).toHaveLength(2);

    const onPurpose = await run('objects-3', '--again');
    expect(onPurpose.code, onPurpose.stderr).toBe(0);
    const rows = readCsvFile(join(dir, 'objects-3.csv'));
    expect(rows.map((r) => r.outcome)).toEqual(['queued', 'queued']);
    for (const [i, r] of rows.entries()) expect(r.docflowId).not.toBe(first[i]!.docflowId);
    expect(objectRequests()).toHaveLength(4);
    // Run again, the batch ordered again is resumed: nothing is ordered a third time.
    const resumed = await run('objects-3', '--again');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(objectRequests()).toHaveLength(4);
    expect(sandbox.stats().repeatedRequestIds).toBe(0);
  });
});
