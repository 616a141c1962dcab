import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, afterEach } from 'vitest';
import type { RunningSandbox, SandboxOptions } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait-for.js';
import { runOutcome } from '../../helpers/csv.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { outcomeCount } from '../../helpers/outcomes.js';
import { OWN_COLUMN_HEADERS_RU } from '../../../src/input/own-columns.js';
import type { Outcome } from '../../../src/domain/outcome.js';
import { OUTCOME_NAMES_RU } from '../../../src/results/russian.js';

type Row = Record<string, string>;
const CRIMEA = 'Республика Крым';
const readCsv = (file: string): Row[] => parse(readFileSync(file), { columns: true, bom: true }) as Row[];
/** An attention file, in the form Russian Excel opens: BOM, ';', CRLF. */
const readAttention = (file: string): Row[] => parse(readFileSync(file), { columns: true, bom: true, delimiter: ';' }) as Row[];

// The file's folder; each test sets up one or two settings (a sandbox, prefix and database each), all of the test's own.
const it = harness({ per: 'file', label: 'ops', engine: 'none' });

// Each test runs whole commands against the sandbox (about 8 to 15 s alone): room for a busy host.
describe('operations: results, attention file, retry, status', { timeout: 90_000 }, () => {
  let dir: string;
  const workers: ChildProcess[] = [];
  let openSandbox: (options: SandboxOptions) => Promise<RunningSandbox>;
  let openPrefix: (label: string) => string;
  let openDatabase: (engine: 'sqlite') => Promise<UsedDatabase>;

  const setUp = async (label: string) => {
    const sandbox = await openSandbox({ sessions: ['s'], egronRegions: [CRIMEA] });
    const prefix = openPrefix(label);
    // A database of each setting's own, as its prefix is: the batches and outcomes are there.
    const database = await openDatabase('sqlite');
    // An English locale whatever the machine's: the hints' language comes from it.
    const env = {
      REDIS_URL,
      REALTY_API_URL: sandbox.url,
      REALTY_SESSION_ID: 's',
      REALTY_PREFIX: prefix,
      DATABASE_URL: database.url,
      LOG_LEVEL: 'silent',
      LANG: 'C.UTF-8',
      LC_ALL: '',
      LC_MESSAGES: '',
    };
    const cli = (args: string[], more: Record<string, string> = {}) => runCli(args, { ...env, ...more });
    const work = () => {
      // A killed worker's calls in flight are reconciled with the news feed: after their
      // timeout and the feed's lag, both short here.
      const child = spawn(
        process.execPath,
        [
          CLI,
          'work',
          '--attempts',
          '3',
          '--backoff-ms',
          '50',
          '--lock-ms',
          '1500',
          '--concurrency',
          '8',
          '--timeout-ms',
          '2000',
          '--feed-lag-ms',
          '500',
        ],
        {
          cwd: ROOT,
          env: childEnv(env),
          stdio: 'ignore',
        },
      );
      workers.push(child);
      return child;
    };
    const outcomes = (batch: string) => outcomeCount(database.db, batch);
    return { sandbox, prefix, cli, work, outcomes };
  };
  const POLL = { timeoutMs: 45_000, intervalMs: 50 };
  const run = (cli: (a: string[]) => ReturnType<typeof runCli>, file: string, batch: string, extra: string[] = []) =>
    cli([
      'run',
      file,
      '--profile',
      'samples/bank-profile.json',
      '--batch',
      batch,
      '--out',
      join(dir, `${batch}.csv`),
      '--rejects',
      join(dir, `${batch}.rejects.csv`),
      '--attempts',
      '3',
      '--backoff-ms',
      '50',
      ...extra,
    ]);

  it.beforeAll(({ dir: folder }) => {
    dir = folder;
  });
  it.beforeEach(({ openSandbox: sandboxes, openPrefix: prefixes, openDatabase: databases }) => {
    openSandbox = sandboxes;
    openPrefix = prefixes;
    openDatabase = databases;
  });
  // Before the harness closes the test's sandboxes and deletes its prefixes and databases.
  afterEach(() => {
    for (const w of workers.splice(0)) if (w.exitCode === null) w.kill('SIGKILL');
  });

  it('regenerates, after a worker was killed mid-batch, the results of an uninterrupted run', async () => {
    const calm = await setUp('calm');
    expect((await run(calm.cli, 'samples/deals.csv', 'calm')).code).toBe(3);

    const rough = await setUp('rough');
    rough.sandbox.configure({ latencyMs: 300 });
    expect(
      (
        await rough.cli([
          'load',
          'samples/deals.csv',
          '--profile',
          'samples/bank-profile.json',
          '--batch',
          'rough',
          '--rejects',
          join(dir, 'r.csv'),
        ])
      ).code,
    ).toBe(3);
    const first = rough.work();
    await waitFor(async () => (await rough.outcomes('rough')) > 5, { ...POLL, what: 'some outcomes' });
    first.kill('SIGKILL');
    rough.work();
    await waitFor(async () => (await rough.outcomes('rough')) === 24, { ...POLL, what: 'every outcome' });
    const regenerated = await rough.cli(['results', 'rough', '--out', join(dir, 'rough.csv')]);
    expect(regenerated.code).toBe(3);

    // A row whose answer the kill lost says its docflow was found in the news feed.
    // The outcome's columns; the docflow's state moves on with the registry's clock, not the run's.
    const comparable = (rows: Row[]) => rows.map(runOutcome);
    expect(comparable(readCsv(join(dir, 'rough.csv')))).toEqual(comparable(readCsv(join(dir, 'calm.csv'))));
    expect(rough.sandbox.stats().docflowsCreated).toBe(calm.sandbox.stats().docflowsCreated);
  });

  it('turns unavailable into queued with retry once the register answers again, and is safe to repeat', async () => {
    const ops = await setUp('retry');
    expect((await run(ops.cli, 'samples/deals.csv', 'night')).code).toBe(3);
    expect(readCsv(join(dir, 'night.csv')).filter((r) => r.outcome === 'unavailable')).toHaveLength(1);

    const refused = await ops.cli(['retry', 'night', '--outcome', 'invalid']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('cannot succeed unchanged');

    ops.sandbox.configure({ egronRegions: [] });
    const retried = await ops.cli(['retry', 'night']);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toContain(': 1 row sent around again');
    // No worker runs yet: retry says so, naming what to start.
    expect(retried.stderr).toContain(
      'realty-batch: no worker is running on this queue: the 1 row sent again wait until `realty-batch work`',
    );
    const again = await ops.cli(['retry', 'night']);
    // The row is pending again until it finishes: a second retry finds nothing to send.
    expect(again.stdout).toMatch(/: 0 rows sent around again/);

    ops.work();
    await waitFor(async () => (await ops.outcomes('night')) === 24, { ...POLL, what: 'the retried row' });
    const results = await ops.cli(['results', 'night', '--out', join(dir, 'night-after.csv')]);
    const after = readCsv(join(dir, 'night-after.csv'));
    expect(after.find((r) => r.dealId === 'CRM-2026-000017')).toMatchObject({ outcome: 'queued' });
    expect(after.filter((r) => r.outcome === 'queued')).toHaveLength(14);
    expect(results.code).toBe(3);
    expect(ops.sandbox.stats().repeatedRequestIds).toBe(0);

    const status = await ops.cli(['status', 'night', '--json']);
    // Rows need a person: status exits 3, as run and results do.
    expect(status.code).toBe(3);
    expect(JSON.parse(status.stdout)).toMatchObject({
      batch: 'night',
      total: 24,
      done: true,
      outcomes: { queued: 14, suspended: 4, invalid: 3, ambiguous: 2, not_found: 1 },
    });
  });

  it('writes an attention file that, fixed and loaded as it is, runs: the ambiguous row ends queued without suggest', async () => {
    const ops = await setUp('attention');
    const attentionFile = join(dir, 'attention.csv');
    const first = await run(ops.cli, 'samples/deals.csv', 'day1', ['--attention', attentionFile]);
    expect(first.stdout).toContain('attention: ');
    const rows = readAttention(attentionFile);
    // row, outcome, hint and errors first, then the input's own columns as they were; in the
    // form Russian Excel opens by a double click: a BOM, ';' and CRLF.
    const inputHeader = readFileSync(join(ROOT, 'samples/deals.csv'), 'utf8')
      .split('\n')[0]!
      .replace(/^\uFEFF/, '')
      .trim();
    expect(readFileSync(attentionFile, 'utf8').split('\r\n')[0]).toBe(`\uFEFFrow;outcome;hint;errors;${inputHeader.replaceAll(',', ';')}`);
    const inputRows = parse(readFileSync(join(ROOT, 'samples/deals.csv')), { columns: true, bom: true }) as Row[];
    for (const r of rows) expect(inputRows[Number(r.row) - 1]!.dealId).toBe(r.dealId);
    expect(rows.map((r) => r.outcome).sort()).toEqual([
      'ambiguous',
      'ambiguous',
      'invalid',
      'invalid',
      'invalid',
      'not_found',
      // The four docflows that wait for the applicants' signatures (201 at creation).
      'suspended',
      'suspended',
      'suspended',
      'suspended',
      'unavailable',
    ]);
    for (const r of rows.filter((x) => x.outcome === 'suspended')) expect(r.hint).toContain('sign the application files');
    const ambiguous = rows.find((r) => r.dealId === 'EKB-2026-000315')!;
    const [pick] = /\d{2}:\d{2}:\d{6,7}:\d+/.exec(ambiguous.hint!)!;
    expect(ambiguous.hint).toMatch(/^put one of \d{2}:\d{2}:\d{6,7}:\d+, \d{2}:\d{2}:\d{6,7}:\d+ in cadastralNumber$/);
    expect(rows.find((r) => r.outcome === 'invalid')!.errors).toMatch(/\w+: /);
    for (const r of rows) expect(r.hint).not.toBe('');
    // No personal data beyond what the input already holds: the attention file is the input's own rows.

    // The same file with the hints in Russian: by --lang, or by a Russian locale.
    const russian = join(dir, 'attention-ru.csv');
    const byFlag = await ops.cli(['results', 'day1', '--out', join(dir, 'day1-again.csv'), '--attention', russian, '--lang', 'ru']);
    expect(byFlag.stderr).toBe('');
    // Our columns, the outcome names and the errors' phrases in Russian too; the same rows.
    const ru = readAttention(russian).map((r): Row => ({
      ...r,
      row: r[OWN_COLUMN_HEADERS_RU.row]!,
      outcome: r[OWN_COLUMN_HEADERS_RU.outcome]!,
      hint: r[OWN_COLUMN_HEADERS_RU.hint]!,
      errors: r[OWN_COLUMN_HEADERS_RU.errors]!,
    }));
    expect(ru.map((r) => [r.row, r.outcome])).toEqual(rows.map((r) => [r.row, OUTCOME_NAMES_RU[r.outcome as Outcome]]));
    ru.forEach((r, i) => expect(r.errors === '', r.row).toBe(rows[i]!.errors === ''));
    expect(ru.find((r) => r.dealId === 'EKB-2026-000315')!.hint).toMatch(
      /^укажите в колонке cadastralNumber один из кадастровых номеров: \d{2}:\d{2}:\d{6,7}:\d+, \d{2}:\d{2}:\d{6,7}:\d+$/,
    );
    for (const r of ru) expect(r.hint).toMatch(/[а-яё]{3}/);
    const byLocale = join(dir, 'attention-locale.csv');
    await ops.cli(['results', 'day1', '--out', join(dir, 'day1-again.csv'), '--attention', byLocale], { LANG: 'ru_RU.UTF-8' });
    expect(readFileSync(byLocale, 'utf8')).toBe(readFileSync(russian, 'utf8'));
    expect((await ops.cli(['results', 'day1', '--out', join(dir, 'x.csv'), '--lang', 'de'])).code).toBe(2);

    // A clerk puts the cadastral number in, and loads the file as it is.
    ambiguous.cadastralNumber = pick;
    const fixed = join(dir, 'attention-fixed.csv');
    await writeFile(fixed, stringify(rows, { header: true }));
    const suggestBefore = ops.sandbox.stats().suggestCalls;
    const second = await run(ops.cli, fixed, 'day1-fixed');
    expect(second.code).toBe(3);
    // Its leading columns are ours: not unknown columns, never deal fields.
    expect(second.stdout).not.toContain('unknown columns');
    const results = readCsv(join(dir, 'day1-fixed.csv'));
    expect(results.find((r) => r.dealId === 'EKB-2026-000315')).toMatchObject({ outcome: 'queued', cadastralNumber: pick });
    // Loaded again, the rows that wait for signatures send nothing: their docflows stand.
    expect(results.filter((r) => r.outcome === 'already_submitted')).toHaveLength(4);
    // Only the other ambiguous and the not_found rows asked suggest again.
    expect(ops.sandbox.stats().suggestCalls - suggestBefore).toBe(2);
  });

  it('writes the attention file as the input was with --attention-as-input, and the results for Excel when the profile says so, unless --no-excel', async () => {
    const ops = await setUp('excel');
    const profile = JSON.parse(readFileSync(join(ROOT, 'samples/bank-profile.json'), 'utf8')) as Record<string, unknown>;
    const excelProfile = join(dir, 'excel-profile.json');
    await writeFile(excelProfile, JSON.stringify({ ...profile, excel: true }));
    const attention = join(dir, 'as-input.attention.csv');
    const first = await run(ops.cli, 'samples/deals.csv', 'excel1', [
      '--profile',
      excelProfile,
      '--attention',
      attention,
      '--attention-as-input',
    ]);
    expect(first.code).toBe(3);
    // The attention file as the input is: UTF-8 without a BOM, ',' and LF.
    const asInput = readFileSync(attention, 'utf8');
    expect(asInput.startsWith('row,outcome,hint,errors,dealId,')).toBe(true);
    expect(asInput).not.toContain('\r');
    // The results in Excel's form because the profile asks for it.
    const results = readFileSync(join(dir, 'excel1.csv'), 'utf8');
    expect(results.startsWith('\uFEFFrow;dealId;outcome;')).toBe(true);
    expect(results).toContain('\r\n');
    // `results` reads the batch's profile too; --no-excel gives the plain form.
    const again = join(dir, 'excel1-again.csv');
    expect((await ops.cli(['results', 'excel1', '--out', again])).code).toBe(3);
    expect(readFileSync(again, 'utf8')).toBe(results);
    const plain = join(dir, 'excel1-plain.csv');
    expect((await ops.cli(['results', 'excel1', '--out', plain, '--no-excel'])).code).toBe(3);
    expect(readFileSync(plain, 'utf8').startsWith('row,dealId,outcome,')).toBe(true);
    const second = await run(ops.cli, 'samples/deals.csv', 'excel2', ['--profile', excelProfile, '--no-excel']);
    expect(readFileSync(join(dir, 'excel2.csv'), 'utf8').startsWith('row,dealId,outcome,')).toBe(true);
    expect(second.code).toBe(3);
  });

  it('lists the recent batches, one a line', async () => {
    const ops = await setUp('list');
    await run(ops.cli, 'samples/deals.csv', 'listed');
    const list = await ops.cli(['status']);
    expect(list.stdout).toMatch(/^listed {2}\S+ {2}loaded {2}rows 24 {2}\S+deals\.csv$/m);
  });
});
