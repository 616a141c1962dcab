/**
 * Issue 23, point 7, as the operator met it, with the built CLI against the sandbox: a
 * dealId repeated for another property is refused with a hint to give the deal its own
 * dealId, and its attention file loaded back unchanged leaves the row refused, naming both
 * properties: never `already_submitted` with the other property's docflow.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { readCsvFile } from '../../helpers/csv.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { expireBatch } from '../../helpers/batch-rows.js';

const readCsv = readCsvFile;
const DEAL = 'MSK-2026-004511';
/** The sample's two rows of DEAL: Профсоюзная 104 (row 2 here) and Вавилова 81 (row 5). */
const [PROFSOYUZNAYA, VAVILOVA] = ROWS.filter((r) => r[0] === DEAL);
const byId = (id: string) => ROWS.find((r) => r[0] === id)!;
const CN = HEADER.indexOf('cadastralNumber');

// Each test runs several commands (about 1 s each to start on this host, with the database opened and migrated).
const it = harness({ per: 'file', label: 'conflict' });

describe('a dealId repeated for another property (issue 23, point 7)', { timeout: 90_000 }, () => {
  let store: UsedDatabase;
  let dir: string;
  let sandbox: RunningSandbox;
  let prefix: string;
  let cli: (args: string[]) => ReturnType<typeof runCli>;
  const run = (file: string, batch: string, extra: string[] = []) =>
    cli([
      'run',
      file,
      '--profile',
      'samples/bank-profile.json',
      '--batch',
      batch,
      '--out',
      join(dir, `${batch}.results.csv`),
      '--rejects',
      join(dir, `${batch}.rejects.csv`),
      '--attention',
      join(dir, `${batch}.attention.csv`),
      '--attempts',
      '2',
      '--backoff-ms',
      '50',
      ...extra,
    ]);
  const results = (batch: string) => readCsv(join(dir, `${batch}.results.csv`));
  const attention = (batch: string) => readCsv(join(dir, `${batch}.attention.csv`));

  it.beforeAll(async ({ dir: folder, sandbox: started, prefix: made, db, env: given }) => {
    dir = folder;
    sandbox = started;
    prefix = made;
    store = db;
    const env = { ...given, LANG: 'C.UTF-8', LC_ALL: '', LC_MESSAGES: '' };
    cli = (args) => runCli(args, env);
    // Row 2 and row 5 share DEAL, for two flats with two cadastral numbers.
    const rows = [byId('NSK-2026-000123'), PROFSOYUZNAYA!, byId('SPB-2026-010078'), byId('KZN-2026-000052'), VAVILOVA!];
    await writeFile(join(dir, 'night.csv'), csvText(rows));
  });

  it('refuses row 5 with the hint to give the deal its own dealId, and its attention file loaded back unchanged keeps it refused', async () => {
    expect((await run(join(dir, 'night.csv'), 'night')).code).toBe(3);
    const first = results('night');
    expect(first.find((r) => r.row === '2')).toMatchObject({ dealId: DEAL, outcome: 'queued' });
    const docflow = first.find((r) => r.row === '2')!.docflowId!;
    expect(first.find((r) => r.row === '5')).toMatchObject({
      outcome: 'invalid',
      errorCode: 'DEAL_ID_CONFLICT',
      errorMessage: 'dealId: repeats the dealId of row 2, which is for another property',
    });
    const [refused] = attention('night');
    expect(refused).toMatchObject({ row: '5', outcome: 'invalid', dealId: DEAL });
    expect(refused!.hint).toBe(
      "this dealId is another property's (see errors): give this deal its own dealId, correct any other field named in errors, then load this file again",
    );
    expect(sandbox.stats().docflowsCreated).toBe(4);
    // The ledger keeps the property the deal was registered for.
    const shown = await cli(['ledger', DEAL, '--profile', 'samples/bank-profile.json']);
    expect(shown.stdout).toContain(`  for the property ${PROFSOYUZNAYA![CN]}\n`);

    // The operator loads the attention file back as it is.
    expect((await run(join(dir, 'night.attention.csv'), 'again')).code).toBe(3);
    const [again] = results('again');
    expect(again).toMatchObject({ row: '1', dealId: DEAL, outcome: 'invalid', errorCode: 'DEAL_ID_CONFLICT', docflowId: '' });
    expect(again!.errorMessage).toBe(
      `dealId ${DEAL} was registered for ${PROFSOYUZNAYA![CN]} (batch night, row 2, docflow ${docflow}); ` +
        `this row is for ${VAVILOVA![CN]}: give this deal its own dealId`,
    );
    // It stays in the attention file, with the same hint.
    expect(attention('again')).toMatchObject([{ row: '1', outcome: 'invalid', dealId: DEAL, hint: refused!.hint }]);

    // --resubmit sends a deal again; it does not make another property's row the same deal.
    expect((await run(join(dir, 'night.attention.csv'), 'resubmitted', ['--resubmit'])).code).toBe(3);
    expect(results('resubmitted')).toMatchObject([{ outcome: 'invalid', errorCode: 'DEAL_ID_CONFLICT' }]);
    // One docflow for the deal, made by row 2; none for row 5's flat under its dealId.
    expect(sandbox.stats().docflowsCreated).toBe(4);
    expect(sandbox.stats().repeatedRequestIds).toBe(0);
  });

  it('keeps the same dealId for the same property in a later batch already_submitted, with the first docflow', async () => {
    await writeFile(join(dir, 'later.csv'), csvText([PROFSOYUZNAYA!]));
    expect((await run(join(dir, 'later.csv'), 'later')).code).toBe(0);
    const docflow = results('night').find((r) => r.row === '2')!.docflowId;
    expect(results('later')).toMatchObject([{ dealId: DEAL, outcome: 'already_submitted', docflowId: docflow }]);
    expect(sandbox.stats().docflowsCreated).toBe(4);
  });

  it('refuses, after suggest found its cadastral number, a row without one whose dealId the ledger has for another flat', async () => {
    // Row 1 of the night (NSK-2026-000123, Челюскинцев 14-81, no cadastral number) made its docflow
    // for the number suggest found. Another flat under its dealId: the load cannot tell by the
    // address alone, the worker's claim can, once suggest gives the row its number.
    const other = [...byId('NSK-2026-000124')];
    other[0] = 'NSK-2026-000123';
    await writeFile(join(dir, 'other-flat.csv'), csvText([other]));
    const suggested = sandbox.stats().suggestCalls;
    expect((await run(join(dir, 'other-flat.csv'), 'other-flat')).code).toBe(3);
    const [row] = results('other-flat');
    expect(row).toMatchObject({ dealId: 'NSK-2026-000123', outcome: 'invalid', errorCode: 'DEAL_ID_CONFLICT' });
    expect(row!.errorMessage).toMatch(
      /^dealId NSK-2026-000123 was registered for \d+:\d+:\d+:\d+ \(batch night, row 1, docflow .+\); this row is for \d+:\d+:\d+:\d+: give this deal its own dealId$/,
    );
    expect(sandbox.stats().suggestCalls).toBe(suggested + 1);
    expect(sandbox.stats().docflowsCreated).toBe(4);
  });

  it('refuses a batch id loaded again after its batch expired, with another file whose row has the dealId for another property', async ({
    redis,
  }) => {
    // Row 1 of batch `reused` makes the deal's docflow for one flat.
    const deal = 'EKB-REUSED-1';
    const [first, other] = [PROFSOYUZNAYA!, VAVILOVA!].map((r) => [deal, ...r.slice(1)]);
    await writeFile(join(dir, 'reused-a.csv'), csvText([first!]));
    expect((await run(join(dir, 'reused-a.csv'), 'reused')).code).toBe(0);
    const [made] = results('reused');
    expect(made).toMatchObject({ outcome: 'queued' });
    // The batch expired (its keys, its row and outcomes in the database; the ledger, kept for years,
    // remembers its row 1), and its id is given to another file.
    const stale = await redis.keys(`{${prefix}}:batch:reused*`);
    if (stale.length > 0) await redis.del(...stale);
    await expireBatch(store.db, 'reused');
    await writeFile(join(dir, 'reused-b.csv'), csvText([other!]));
    const created = sandbox.stats().docflowsCreated;
    expect((await run(join(dir, 'reused-b.csv'), 'reused')).code).toBe(3);
    // Its row 1 is another flat under the same dealId: refused, never queued with the first flat's docflow.
    expect(results('reused')).toMatchObject([{ row: '1', dealId: deal, outcome: 'invalid', errorCode: 'DEAL_ID_CONFLICT', docflowId: '' }]);
    expect(results('reused')[0]!.errorMessage).toContain(
      `dealId ${deal} was registered for ${PROFSOYUZNAYA![CN]} (batch reused, row 1, docflow ${made!.docflowId})`,
    );
    expect(sandbox.stats().docflowsCreated).toBe(created);
  });
});
