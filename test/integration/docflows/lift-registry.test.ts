/**
 * A file of lifts from the command line against the registry's mortgage records, through real
 * Redis, SQLite and the real sandbox over HTTP, followed to the registry's answer: rows that
 * complete (one found through suggest), rows the registry refuses (another bank's mortgage, no
 * such record, a record lifted already), rows refused at load (no record number, a date in the
 * future, an unknown encumbrance type); and a registration followed by its own lift.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, describe, expect } from 'vitest';
import { loadRegistry, type EncumbranceRecord, type RunningSandbox } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';

const AGREEMENT = ['agreementContentId', 'agreementSignatureIds', 'agreementFileType'];
const POA = '0a4c7f6e-3b1d-4e8a-9c2f-5d6e7f8a9b0c';
const POA_SIGNATURE = '1b5d8a7f-4c2e-4f9b-8d3a-6e7f8a9b0c1d';
const OTHER_BANK = '7707083893';
const bank = (JSON.parse(readFileSync(join(ROOT, 'samples/bank-profile.json'), 'utf8')) as { organization: { inn: string } }).organization
  .inn;
// The records: the objects of samples/README.md's rows 1 (found by suggest), 2 (by its cadastral number) and 7 (suggest).
const nsk: EncumbranceRecord = { number: '54-54/001-2021-77', date: '2021-06-15', type: 'mortgage', encumbrancerInn: bank };
const msk: EncumbranceRecord = { number: '77-77/012-2022-5', date: '2022-09-01', type: 'mortgage', encumbrancerInn: bank };
const ekb: EncumbranceRecord = { number: '66-66/001-2019-3', date: '2019-04-02', type: 'mortgage', encumbrancerInn: OTHER_BANK };
const recordsBy: Record<string, EncumbranceRecord[]> = {
  '54:35:101234:81': [nsk],
  '77:06:0005011:2376': [msk],
  '66:41:0702050:4433': [ekb],
};
const registry = (await loadRegistry(join(ROOT, 'samples/registry.json'))).map((o) =>
  recordsBy[o.objectCn] ? { ...o, encumbrances: recordsBy[o.objectCn] } : o,
);

// The file's prefix, folder and sandbox (the registry above, answering within 100 ms); no database of its own: the commands use their default.
const it = harness({
  per: 'file',
  label: 'lift-registry',
  engine: 'none',
  logLevel: 'warn',
  sandbox: { sessions: ['s'], lifecycleMs: 100, registry },
});

describe('realty-batch run --type lift against the registry', () => {
  let sandbox: RunningSandbox;
  let dir: string;
  let tracker: ChildProcess | undefined;
  let env: Record<string, string>;
  const samples = parse(readFileSync(join(ROOT, 'samples/deals.csv'), 'utf8'), { columns: true }) as Array<Record<string, string>>;
  /** A sample row as a lift of `record` (its agreement columns left out). */
  const liftOf = (sample: Record<string, string>, record: Partial<EncumbranceRecord> & { number: string; date: string }, more = {}) => ({
    ...Object.fromEntries(Object.entries(sample).filter(([k]) => !AGREEMENT.includes(k))),
    recordNumber: record.number,
    recordDate: record.date,
    ...more,
  });
  const run = (file: string, batch: string, ...more: string[]) =>
    runCli(
      ['run', join(dir, file), '--profile', join(dir, 'bank.json'), '--batch', batch, '--out', join(dir, `${batch}.csv`), ...more],
      env,
    );
  /** Waits until every docflow of the batch has its registry's answer, completed or error. */
  const settled = (batch: string, count: number) =>
    waitFor(
      async () => {
        const status = JSON.parse((await runCli(['status', batch, '--json'], env)).stdout) as { states: Record<string, number> };
        return (status.states.completed ?? 0) + (status.states.error ?? 0) === count;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: `the registry to answer the ${count} docflows of ${batch}` },
    );
  const recordsOf = async (cadastralNumber: string) => {
    const response = await fetch(`${sandbox.url}/__sandbox/registry`);
    expect(response.status).toBe(200);
    const objects = (await response.json()) as Array<{ cadastralNumber: string; encumbrances: EncumbranceRecord[] }>;
    return objects.find((o) => o.cadastralNumber === cadastralNumber)?.encumbrances ?? [];
  };

  it.beforeAll(async ({ sandbox: started, env: given, dir: folder }) => {
    sandbox = started;
    // REDIS_URL, the sandbox, session s, the prefix, LOG_LEVEL warn.
    env = given;
    dir = folder;
    const profile = JSON.parse(readFileSync(join(ROOT, 'samples/bank-profile.json'), 'utf8')) as { representative: object };
    profile.representative = { ...profile.representative, attorney: { contentId: POA, signatureIds: [POA_SIGNATURE] } };
    await writeFile(join(dir, 'bank.json'), JSON.stringify(profile));
    const rows = [
      liftOf(samples[0]!, nsk, { cadastralNumber: '' }),
      liftOf(samples[1]!, msk),
      liftOf(samples[6]!, ekb),
      liftOf(samples[7]!, { number: '16-16/001-2020-9', date: '2020-01-10' }),
      liftOf(samples[3]!, { number: '', date: '2021-01-01' }),
      liftOf(samples[9]!, { number: '66-66/001-2024-1', date: '2099-01-01' }),
      liftOf(samples[10]!, { number: '16-16/001-2024-2', date: '2024-01-01' }, { encumbranceType: 'pledge' }),
    ];
    // Every row's columns: the first row alone has no encumbranceType.
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    await writeFile(join(dir, 'lifts.csv'), stringify(rows, { header: true, columns }));
    // Another deal of the bank's system lifting the Moscow record again, after the first lift completed.
    await writeFile(join(dir, 'lifts-again.csv'), stringify([liftOf(samples[1]!, msk, { dealId: 'MSK-2026-004511-R' })], { header: true }));
    tracker = spawn(process.execPath, [CLI, 'track', '--poll-ms', '50'], { cwd: ROOT, env: childEnv(env), stdio: 'ignore' });
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(() => {
    tracker?.kill('SIGKILL');
  });

  it("lifts the bank's records, refuses another bank's and a missing one with the registry's reason, and invalid rows at load", async () => {
    const lifted = await run('lifts.csv', 'lifts-1', '--type', 'lift', '--attention', join(dir, 'lifts-1.attention.csv'));
    expect(lifted.code, lifted.stderr).toBe(3);
    await settled('lifts-1', 4);
    const results = await runCli(
      ['results', 'lifts-1', '--out', join(dir, 'lifts-1.csv'), '--attention', join(dir, 'lifts-1.attention.csv')],
      env,
    );
    expect(results.code, results.stderr).toBe(3);
    const rows = readCsvFile(join(dir, 'lifts-1.csv'));
    expect(rows.map((r) => [r.row, r.dealId, r.outcome, r.state])).toEqual([
      ['1', samples[0]!.dealId, 'queued', 'completed'],
      ['2', samples[1]!.dealId, 'queued', 'completed'],
      ['3', samples[6]!.dealId, 'queued', 'error'],
      ['4', samples[7]!.dealId, 'queued', 'error'],
      ['5', samples[3]!.dealId, 'invalid', ''],
      ['6', samples[9]!.dealId, 'invalid', ''],
      ['7', samples[10]!.dealId, 'invalid', ''],
    ]);
    // Row 1 had no cadastral number: suggest found the object whose record it lifted.
    expect(rows[0]!.cadastralNumber).toBe('54:35:101234:81');
    expect(rows[4]!.errorMessage).toContain('recordNumber: is required');
    expect(rows[5]!.errorMessage).toMatch(/recordDate: .*future/);
    expect(rows[6]!.errorMessage).toContain('encumbranceType: must be one of mortgage, mortgageInLaw');

    // The registry's reasons reach the attention file, with the lift's hint; the bank's INN is never in another bank's refusal.
    const attention = new Map(readCsvFile(join(dir, 'lifts-1.attention.csv')).map((r) => [r.dealId, r]));
    expect(attention.get(samples[6]!.dealId)!.errors).toContain(
      "registrationRefused: The register refused to lift the mortgage: the mortgage record *** is another encumbrancer's",
    );
    expect(attention.get(samples[7]!.dealId)!.errors).toContain('the object 16:50:011301:3398 holds no mortgage record');
    for (const refused of [samples[6]!, samples[7]!])
      expect(attention.get(refused.dealId!)!.hint).toContain('the registry refused the lift (check recordNumber and recordDate)');
    expect(attention.get(samples[0]!.dealId)).toBeUndefined();

    // status names the batch's type, in words and in its JSON.
    const status = await runCli(['status', 'lifts-1'], env);
    expect(status.stdout).toContain('docflows: mortgage lifts (cessation_encumbrance_request)');
    expect(JSON.parse((await runCli(['status', 'lifts-1', '--json'], env)).stdout)).toMatchObject({
      type: 'cessation_encumbrance_request',
    });
    expect((await runCli(['status'], env)).stdout).toMatch(/lifts-1 .* rows 7 {2}mortgage lifts \(cessation_encumbrance_request\)/);

    // The registry: the bank's two records lifted, the other bank's kept.
    expect(await recordsOf('54:35:101234:81')).toEqual([]);
    expect(await recordsOf('77:06:0005011:2376')).toEqual([]);
    expect(await recordsOf('66:41:0702050:4433')).toEqual([ekb]);
  });

  it('ends a lift of a record lifted already in error, the registry saying it holds no such record', async () => {
    const again = await run('lifts-again.csv', 'lifts-2', '--type', 'lift');
    expect(again.code, again.stderr).toBe(0);
    await settled('lifts-2', 1);
    expect((await runCli(['results', 'lifts-2', '--out', join(dir, 'lifts-2.csv')], env)).code).toBe(0);
    const [row] = readCsvFile(join(dir, 'lifts-2.csv'));
    expect(row).toMatchObject({ dealId: 'MSK-2026-004511-R', outcome: 'queued', state: 'error' });
    expect(row!.registryError).toContain('the object 77:06:0005011:2376 holds no mortgage record');
    // Its first lift's docflow is not this one: a second dealId is a second entry, sent once.
    expect(row!.docflowId).not.toBe(readCsvFile(join(dir, 'lifts-1.csv'))[1]!.docflowId);
  });

  it('registers a mortgage, then lifts the record its registration made: the registry holds it, then does not', async () => {
    // samples/README.md's row 15: suggest finds Маршала Бирюзова 32, кв 17.
    const deal = samples[14]!;
    await writeFile(join(dir, 'register.csv'), stringify([deal], { header: true }));
    const registered = await run('register.csv', 'reg-1');
    expect(registered.code, registered.stderr).toBe(0);
    await settled('reg-1', 1);
    expect((await runCli(['results', 'reg-1', '--out', join(dir, 'reg-1.csv')], env)).code).toBe(0);
    const [reg] = readCsvFile(join(dir, 'reg-1.csv'));
    expect(reg).toMatchObject({ outcome: 'queued', state: 'completed' });
    // What the registry recorded, as the bank reads it from the registration's extract.
    const [record] = await recordsOf(reg!.cadastralNumber!);
    expect(record).toMatchObject({ type: 'mortgage', encumbrancerInn: bank });

    await writeFile(join(dir, 'lift-own.csv'), stringify([liftOf(deal, record!)], { header: true }));
    const lifted = await run('lift-own.csv', 'lift-own', '--type', 'lift');
    expect(lifted.code, lifted.stderr).toBe(0);
    await settled('lift-own', 1);
    expect((await runCli(['results', 'lift-own', '--out', join(dir, 'lift-own.csv')], env)).code).toBe(0);
    const [lift] = readCsvFile(join(dir, 'lift-own.csv'));
    expect(lift).toMatchObject({ dealId: deal.dealId, outcome: 'queued', state: 'completed', type: 'cessation_encumbrance_request' });
    expect(lift!.docflowId).not.toBe(reg!.docflowId);
    expect(await recordsOf(reg!.cadastralNumber!)).toEqual([]);
  });
});
