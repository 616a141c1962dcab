/**
 * `run --type lift` from the command line, through real Redis, SQLite and the real sandbox
 * over HTTP: a deal's lift is another entry of the ledger than its registration, filed once.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { describe, expect } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { parseRequestId } from '../../../src/ledger/entry.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { deletePrefix } from '../../helpers/redis.js';
import { TEST_SIGNATURE } from '../../helpers/signatures.js';

const AGREEMENT = ['agreementContentId', 'agreementSignatureIds', 'agreementFileType'];
const POA = '0a4c7f6e-3b1d-4e8a-9c2f-5d6e7f8a9b0c';
const POA_SIGNATURE = '1b5d8a7f-4c2e-4f9b-8d3a-6e7f8a9b0c1d';

// One sandbox, prefix and folder for the file, as before; no database of its own (the runs' default
// place); the session the demo gives.
const it = harness({ per: 'file', label: 'lift', sandbox: {}, engine: 'none', session: 'demo-session', logLevel: 'warn' });

describe('realty-batch run --type lift', () => {
  // The file's fixtures, named once for the helpers below.
  let sandbox: RunningSandbox;
  let dir: string;
  let prefix: string;
  let env: Record<string, string>;
  // The samples' first two rows, both queued as registrations (samples/README.md).
  const samples = parse(readFileSync(join(ROOT, 'samples/deals.csv'), 'utf8'), { columns: true }) as Array<Record<string, string>>;
  const deals = samples.slice(0, 2);
  const lifts = deals.map((d, i) => {
    const row: Record<string, string> = Object.fromEntries(Object.entries(d).filter(([k]) => !AGREEMENT.includes(k)));
    return { ...row, recordNumber: `54-01/2026-${i + 1}`, recordDate: '03.02.2026' };
  });
  const run = (file: string, batch: string, ...more: string[]) =>
    runCli(['run', file, '--profile', join(dir, 'bank.json'), '--batch', batch, '--out', join(dir, `${batch}.csv`), ...more], env);

  it.beforeAll(async ({ sandbox: s, dir: d, prefix: p, env: e }) => {
    [sandbox, dir, prefix, env] = [s, d, p, e];
    // The samples' bank, its representative acting by a power of attorney uploaded before (content ids).
    const profile = JSON.parse(readFileSync(join(ROOT, 'samples/bank-profile.json'), 'utf8')) as { representative: object };
    profile.representative = { ...profile.representative, attorney: { contentId: POA, signatureIds: [POA_SIGNATURE] } };
    await writeFile(join(dir, 'bank.json'), JSON.stringify(profile));
    await writeFile(join(dir, 'deals.csv'), stringify(deals, { header: true }));
    await writeFile(join(dir, 'lifts.csv'), stringify(lifts, { header: true }));
    // The samples' third deal (two spouses), lifted by a representative acting by the bank's charter.
    const third = Object.fromEntries(Object.entries(samples[2]!).filter(([k]) => !AGREEMENT.includes(k)));
    await writeFile(
      join(dir, 'spouses-lift.csv'),
      stringify([{ ...third, recordNumber: '54-01/2026-3', recordDate: '2026-02-03' }], { header: true }),
    );
    await writeFile(
      join(dir, 'bad-lifts.csv'),
      stringify([{ ...lifts[0]!, recordNumber: '', recordDate: '2099-01-01' }], { header: true }),
    );
  });
  it("files each deal's lift after its registration: two docflows a deal, neither already_submitted for the other", async () => {
    const registered = await run(join(dir, 'deals.csv'), 'reg-1');
    expect(registered.code, registered.stderr).toBe(0);
    const regRows = readCsvFile(join(dir, 'reg-1.csv'));
    expect(regRows.map((r) => r.outcome)).toEqual(['queued', 'queued']);

    const lifted = await run(join(dir, 'lifts.csv'), 'lift-1', '--type', 'lift');
    expect(lifted.code, lifted.stderr).toBe(0);
    const liftRows = readCsvFile(join(dir, 'lift-1.csv'));
    // The bank's power of attorney went with its signature: nothing left to sign, so the gateway queued each (200, not 201).
    expect(liftRows.map((r) => [r.dealId, r.outcome, r.type])).toEqual(
      deals.map((d) => [d.dealId, 'queued', 'cessation_encumbrance_request']),
    );
    for (const [i, r] of liftRows.entries()) {
      expect(r.docflowId).not.toBe(regRows[i]!.docflowId);
      expect(parseRequestId(r.requestId!)).toMatchObject({ type: 'cessation_encumbrance_request', dealId: deals[i]!.dealId, n: 0 });
    }
    // What the gateway got: one registration and one lift for each deal, each requestId once.
    const byType = new Map<string, number>();
    for (const d of sandbox.docflows()) byType.set(d.type, (byType.get(d.type) ?? 0) + 1);
    expect(Object.fromEntries(byType)).toEqual({ encumbrance_request: 2, cessation_encumbrance_request: 2 });
    expect(sandbox.stats().repeatedRequestIds).toBe(0);
  });

  it('never files a lift twice: the same lifts in another batch are already_submitted with the first docflows', async () => {
    const first = readCsvFile(join(dir, 'lift-1.csv'));
    const again = await run(join(dir, 'lifts.csv'), 'lift-2', '--type', 'cessation_encumbrance_request');
    expect(again.code, again.stderr).toBe(0);
    const rows = readCsvFile(join(dir, 'lift-2.csv'));
    expect(rows.map((r) => [r.outcome, r.docflowId])).toEqual(first.map((r) => ['already_submitted', r.docflowId]));
    expect(sandbox.docflows().filter((d) => d.type === 'cessation_encumbrance_request')).toHaveLength(2);
  });

  it("counts the fleet's finished rows per docflow type: the workers' and the load's", async ({ redis, keys }) => {
    // Written by the three runs before: the registrations and the lifts by their workers, the
    // second file's lifts by its load (already_submitted there, no job).
    const outcomes = Object.entries(await redis.hgetall(keys.metrics)).filter(([field]) => field.startsWith('outcome|'));
    expect(Object.fromEntries(outcomes)).toEqual({
      'outcome|encumbrance_request|queued': '2',
      'outcome|cessation_encumbrance_request|queued': '2',
      'outcome|cessation_encumbrance_request|already_submitted': '2',
    });
  });

  it('sends a lift without a power of attorney for the representative to sign: suspended (201)', async () => {
    const result = await runCli(
      [
        'run',
        join(dir, 'spouses-lift.csv'),
        '--type',
        'lift',
        '--profile',
        join(ROOT, 'samples/bank-profile.json'),
        '--batch',
        'lift-3',
        '--out',
        join(dir, 'lift-3.csv'),
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(readCsvFile(join(dir, 'lift-3.csv')).map((r) => [r.dealId, r.outcome, r.httpStatus])).toEqual([
      [samples[2]!.dealId, 'suspended', '201'],
    ]);
  });

  it("uploads the profile's power of attorney by file once a batch, checked at load like a row's files", async () => {
    await writeFile(join(dir, 'poa.pdf'), Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n'));
    await writeFile(join(dir, 'poa.pdf.sig'), TEST_SIGNATURE);
    const profile = JSON.parse(readFileSync(join(ROOT, 'samples/bank-profile.json'), 'utf8')) as { representative: object };
    const withFile = (file: string) => ({
      ...profile,
      representative: { ...profile.representative, attorney: { file, signatureFiles: ['poa.pdf.sig'] } },
    });
    await writeFile(join(dir, 'bank-poa.json'), JSON.stringify(withFile('poa.pdf')));
    await writeFile(join(dir, 'bank-no-poa.json'), JSON.stringify(withFile('missing.pdf')));
    const lifts4 = samples.slice(3, 5).map((d, i) => ({
      ...Object.fromEntries(Object.entries(d).filter(([k]) => !AGREEMENT.includes(k))),
      recordNumber: `78-01/2026-${i}`,
      recordDate: '2026-02-03',
    }));
    await writeFile(join(dir, 'lifts-poa.csv'), stringify(lifts4, { header: true }));
    const uploadsBefore = sandbox.stats().contents.uploads;
    const lift = (profileFile: string, batch: string) =>
      runCli(
        [
          'run',
          join(dir, 'lifts-poa.csv'),
          '--type',
          'lift',
          '--profile',
          join(dir, profileFile),
          '--batch',
          batch,
          '--out',
          join(dir, `${batch}.csv`),
        ],
        env,
      );

    const missing = await lift('bank-no-poa.json', 'lift-poa-0');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('representative.attorney.file: names no file');
    expect(sandbox.stats().contents.uploads).toBe(uploadsBefore);

    const result = await lift('bank-poa.json', 'lift-poa-1');
    expect(result.code, result.stderr).toBe(0);
    // Signed, nothing is left to sign: queued; the power of attorney and its signature went up once for both rows.
    expect(readCsvFile(join(dir, 'lift-poa-1.csv')).map((r) => r.outcome)).toEqual(['queued', 'queued']);
    expect(sandbox.stats().contents.uploads - uploadsBefore).toBe(2);
  });

  it("reads a bank's own headers for a lift's columns through --mapping, which a registration's mapping may not name", async () => {
    const ru = lifts.map((l) => {
      const { recordNumber, recordDate, ...rest } = l;
      return { ...rest, 'Номер записи': recordNumber, 'Дата записи': recordDate };
    });
    await writeFile(join(dir, 'lifts-ru.csv'), stringify(ru, { header: true }));
    await writeFile(join(dir, 'map.json'), JSON.stringify({ columns: { 'Номер записи': 'recordNumber', 'Дата записи': 'recordDate' } }));
    const load = (...more: string[]) =>
      runCli(
        [
          'load',
          join(dir, 'lifts-ru.csv'),
          '--profile',
          join(dir, 'bank.json'),
          '--mapping',
          join(dir, 'map.json'),
          '--dry-run',
          '--json',
          ...more,
        ],
        env,
      );
    const lifted = await load('--type', 'lift');
    expect(lifted.code, lifted.stderr).toBe(0);
    expect(JSON.parse(lifted.stdout)).toMatchObject({ read: 2, valid: 2, invalid: 0, unknownColumns: [] });
    const registration = await load();
    expect(registration.code).toBe(1);
    expect(registration.stderr).toContain('columns.Номер записи: "recordNumber" is not a deal field');
  });

  it('refuses a lift row without its record, naming the row, the field and the problem, and an unknown --type before anything runs', async () => {
    const bad = await run(join(dir, 'bad-lifts.csv'), 'lift-bad', '--type', 'lift');
    expect(bad.code).toBe(3);
    const [row] = readCsvFile(join(dir, 'lift-bad.csv'));
    expect(row).toMatchObject({ row: '1', outcome: 'invalid' });
    expect(row!.errorMessage).toContain('recordNumber: is required');
    expect(row!.errorMessage).toMatch(/recordDate: /);

    const unknown = await run(join(dir, 'lifts.csv'), 'lift-x', '--type', 'mortgage-lift');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /--type "mortgage-lift" is not a docflow type this version files: registration \(encumbrance_request\), lift/,
    );
  });
  // Last: it empties the file's Redis.
  it("checks a profile given again to retry --missing as at load: a lift's power of attorney by file", async () => {
    // Deals not lifted before: their rows wait for a worker (none runs).
    const more = samples.slice(6, 8).map((d, i) => ({
      ...Object.fromEntries(Object.entries(d).filter(([k]) => !AGREEMENT.includes(k))),
      recordNumber: `66-01/2026-${i}`,
      recordDate: '2026-02-03',
    }));
    await writeFile(join(dir, 'lifts-poa-2.csv'), stringify(more, { header: true }));
    const loaded = await runCli(
      ['load', join(dir, 'lifts-poa-2.csv'), '--type', 'lift', '--profile', join(dir, 'bank-poa.json'), '--batch', 'lift-poa-2'],
      env,
    );
    expect(loaded.code, loaded.stderr).toBe(0);
    // Redis loses everything (the jobs, the batch's profile); the database keeps the batch.
    await deletePrefix(prefix);
    const refused = await runCli(['retry', 'lift-poa-2', '--missing', '--profile', join(dir, 'bank-no-poa.json')], env);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stderr).toContain('representative.attorney.file: names no file');
    const retried = await runCli(['retry', 'lift-poa-2', '--missing', '--profile', join(dir, 'bank-poa.json')], env);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain('batch lift-poa-2: 2 rows sent around again (missing)');
  });
});
