/**
 * `realty-batch ledger import`: the ledger rebuilt from results files when the database is lost.
 * A batch run against the sandbox writes its results (the Excel form: BOM, `;`, CRLF); the
 * database is dropped and Redis emptied; the import rebuilds the ledger from the file; the same
 * file run again files nothing and gives every row its docflow back. An older file (no requestId
 * and type columns) needs --profile and --type and imports try 0; an entry that names another
 * docflow is never overwritten but reported, exit 3.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, vi } from 'vitest';
import type { Env } from '../../../src/cli/environment.js';
import { runProgram } from '../../../src/cli/program.js';
import { loadConfig } from '../../../src/config.js';
import type { DatabaseTarget } from '../../../src/db/location.js';
import { listActions } from '../../../src/db/operator-actions.js';
import { createLogger } from '../../../src/logger.js';
import { RESULTS_FILE_COLUMNS } from '../../../src/domain/outcome.js';
import { connectRedis } from '../../../src/redis/connection.js';
import { createKeys } from '../../../src/redis/keys.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { generateDeals } from '../../chaos/generate-deals.js';
import { ROOT } from '../../helpers/cli.js';
import { csvText } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { ledgerRow, ledgerRows, putLedgerRow } from '../../helpers/ledger-rows.js';
import { startPrivateRedis, type PrivateRedis } from '../../helpers/private-redis.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

const INN = '7701934587';
const PROFILE = join(ROOT, 'samples/bank-profile.json');
const SUBMITTED = new Set(['queued', 'suspended', 'already_submitted']);
type Line = Record<string, string>;

function envOf(vars: Record<string, string>, database: DatabaseTarget): Env {
  const config = loadConfig({ REALTY_PREFIX: 'ledger-import', ...vars });
  return { config, logger: createLogger({ level: 'silent' }), keys: createKeys(config.prefix), connect: connectRedis, database };
}

/** `realty-batch ...args` in this process: its exit code and what it printed. */
async function cli(args: string[], env: Env): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void (stdout += `${parts.join(' ')}\n`));
  const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void (stderr += `${parts.join(' ')}\n`));
  try {
    const code = await runProgram(['node', 'realty-batch', ...args], {
      environment: () => env,
      output: { writeOut: (s) => (stdout += s), writeErr: (s) => (stderr += s) },
    });
    return { code, stdout, stderr };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

// The file's folder and sandboxes (which keep every docflow across the runs); its own Redis server; the test opens its databases.
const lost = harness({ per: 'file', label: 'ledger-import', engine: 'none' });
// A folder and a database of each test's own; no Redis.
const it = harness({ label: 'ledger-import' });

describe('ledger import: a lost database rebuilt from the results file', () => {
  const ROWS = 12;
  const deals = generateDeals(ROWS, 1000, 'L');
  let dir: string;
  let redisServer: PrivateRedis;
  let redis: Redis;
  let sandbox: RunningSandbox;

  lost.beforeAll(async ({ dir: folder, sandbox: started }) => {
    dir = folder;
    redisServer = await startPrivateRedis(dir);
    redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    await writeFile(join(dir, 'deals.csv'), csvText(deals.rows));
    // The gateway keeps every docflow across the runs and never refuses a repeated requestId.
    sandbox = started;
  }, 60_000);
  // Before the harness removes the folder the server keeps its files in.
  afterAll(async () => {
    redis.disconnect();
    await redisServer.stop();
  });

  const env = (database: UsedDatabase) =>
    envOf({ REDIS_URL: redisServer.url, REALTY_API_URL: sandbox.url, REALTY_SESSION_ID: 's', LOG_LEVEL: 'silent' }, database.target);
  const run = (database: UsedDatabase, out: string) =>
    cli(
      [
        'run',
        join(dir, 'deals.csv'),
        '--profile',
        PROFILE,
        '--out',
        join(dir, out),
        '--excel',
        '--concurrency',
        '4',
        '--timeout-ms',
        '2000',
        '--feed-lag-ms',
        '500',
        '--backoff-ms',
        '50',
      ],
      env(database),
    );
  const results = (out: string): Line[] =>
    parse(readFileSync(join(dir, out)), { columns: true, bom: true, delimiter: ';', record_delimiter: '\r\n' }) as Line[];

  lost(
    'the same file run again on the rebuilt ledger files nothing and gives every row its docflow',
    async ({ openDatabase }) => {
      const gone = await openDatabase('sqlite');
      const first = await run(gone, 'first.csv');
      expect(first.code, first.stderr).toBe(0);
      const before = results('first.csv');
      expect(Object.keys(before[0]!)).toEqual([...RESULTS_FILE_COLUMNS]);
      expect(before.filter((l) => SUBMITTED.has(l.outcome!))).toHaveLength(ROWS);
      // Each row names the try that made its docflow and its type: what the import reads.
      for (const l of before) {
        expect(l.requestId).toBe(`${INN}:reg:0:${l.dealId}`);
        expect(l.type).toBe('encumbrance_request');
      }
      const made = sandbox.stats().docflowsCreated;
      expect(made).toBe(ROWS);

      // Everything lost: the database (no backup) and Redis.
      await gone.drop();
      await redis.flushall();
      const rebuilt = await openDatabase('sqlite');

      const imported = await cli(['ledger', 'import', join(dir, 'first.csv'), '--operator', 'ops'], env(rebuilt));
      expect(imported.code, imported.stderr + imported.stdout).toBe(0);
      expect(imported.stdout).toContain(
        `ledger import: ${ROWS} imported, 0 already known, 0 conflicts, 0 not importable, 0 rows without a docflow skipped`,
      );
      const entries = await ledgerRows(rebuilt.db);
      expect(entries).toHaveLength(ROWS);
      expect(entries.every((e) => e.state === 'submitted' && e.bank === INN && e.n === 0)).toBe(true);
      const [action] = await listActions(rebuilt.db);
      expect(action).toMatchObject({ who: 'ops', action: 'ledger import' });
      expect(action!.detail).toContain(`first.csv: ${ROWS} imported`);

      // Imported twice: every entry is known, nothing changes.
      const again = await cli(['ledger', 'import', join(dir, 'first.csv')], env(rebuilt));
      expect(again.stdout).toContain(`ledger import: 0 imported, ${ROWS} already known`);

      const second = await run(rebuilt, 'second.csv');
      expect(second.code, second.stderr).toBe(0);
      expect(sandbox.stats().docflowsCreated).toBe(made);
      expect(sandbox.stats().requestIdsWithSeveralDocflows).toBe(0);
      const after = results('second.csv');
      expect(after.map((l) => [l.dealId, l.docflowId, l.requestId])).toEqual(before.map((l) => [l.dealId, l.docflowId, l.requestId]));
      expect(after.every((l) => SUBMITTED.has(l.outcome!))).toBe(true);
    },
    180_000,
  );
});

describe('ledger import: older files and conflicts', () => {
  let dir: string;
  let database: UsedDatabase;
  it.beforeEach(({ dir: folder, db }) => {
    dir = folder;
    database = db;
  });
  const env = () => envOf({}, database.target);
  const OLD_HEADER = 'row,dealId,outcome,docflowId,cadastralNumber,httpStatus,attempts,errorCode,errorMessage,finishedAt';

  it('imports a file without requestId and type columns as try 0, under --profile and --type, and refuses it without them', async () => {
    const file = join(dir, 'old.csv');
    await writeFile(
      file,
      [
        OLD_HEADER,
        '1,D-1,queued,df-1,77:01:0001:1,200,1,,,2026-01-01T00:00:00.000Z',
        '2,D-2,suspended,df-2,,201,1,,,2026-01-01T00:00:01.000Z',
        '3,D-3,not_found,,,,1,NOT_FOUND,nothing found,2026-01-01T00:00:02.000Z',
        '',
      ].join('\n'),
    );
    const refused = await cli(['ledger', 'import', file], env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('has no requestId and type columns (a results file of an earlier version): give --profile');
    expect(await ledgerRows(database.db)).toEqual([]);

    const done = await cli(['ledger', 'import', file, '--profile', PROFILE, '--type', 'reg'], env());
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(
      'ledger import: 2 imported, 0 already known, 0 conflicts, 0 not importable, 1 rows without a docflow skipped',
    );
    expect(await ledgerRow(database.db, INN, 'D-1')).toMatchObject({
      state: 'submitted',
      n: 0,
      docflow_id: 'df-1',
      outcome: 'queued',
      cn: '77:01:0001:1',
      batch: '',
      row: 0,
    });
    expect(await ledgerRow(database.db, INN, 'D-2')).toMatchObject({ state: 'submitted', docflow_id: 'df-2', outcome: 'suspended' });
  });

  it('never overwrites an entry that names another docflow: a conflict line, exit 3; the rest imported or known', async () => {
    await putLedgerRow(database.db, { bank: INN, deal_id: 'D-1', state: 'submitted', docflow_id: 'df-ledger', outcome: 'queued' });
    await putLedgerRow(database.db, { bank: INN, deal_id: 'D-3', state: 'submitted', docflow_id: 'df-3', outcome: 'queued' });
    const file = join(dir, 'results.jsonl');
    const line = (row: number, dealId: string, docflowId: string | null, requestId: string | null, outcome = 'queued') =>
      JSON.stringify({
        row,
        dealId,
        outcome,
        docflowId,
        attempts: 1,
        finishedAt: '2026-01-01T00:00:00.000Z',
        requestId,
        type: requestId && 'encumbrance_request',
      });
    await writeFile(
      file,
      [
        line(1, 'D-1', 'df-file', `${INN}:reg:0:D-1`),
        line(2, 'D-2', 'df-2', `${INN}:reg:1:D-2`),
        line(3, 'D-3', 'df-3', `${INN}:reg:0:D-3`, 'already_submitted'),
        line(4, 'D-4', 'df-4', `${INN}:reg:0:D-9`),
        line(5, 'D-5', null, null, 'failed'),
        '',
      ].join('\n'),
    );
    const done = await cli(['ledger', 'import', file], env());
    expect(done.code).toBe(3);
    expect(done.stdout).toContain(
      "conflict: results.jsonl, line 1: deal D-1 has docflow df-ledger in the ledger, the file names df-file; the ledger's is kept",
    );
    expect(done.stdout).toContain(
      `not imported: results.jsonl, line 4 (deal D-4): its requestId ${INN}:reg:0:D-9 names deal D-9; not imported.`,
    );
    expect(done.stdout).toContain(
      'ledger import: 1 imported, 1 already known, 1 conflicts, 1 not importable, 1 rows without a docflow skipped',
    );
    expect(await ledgerRow(database.db, INN, 'D-1')).toMatchObject({ docflow_id: 'df-ledger' });
    // The try its requestId names.
    expect(await ledgerRow(database.db, INN, 'D-2')).toMatchObject({ state: 'submitted', n: 1, docflow_id: 'df-2' });
    expect(await ledgerRow(database.db, INN, 'D-4')).toBeUndefined();
  });

  it("gives a claim without a docflow the file's docflow, and keeps a resubmission's earlier docflow as the one it names", async () => {
    await putLedgerRow(database.db, { bank: INN, deal_id: 'D-1', state: 'idle', batch: 'b', row: 7 });
    const prev = JSON.stringify({ n: 0, docflowId: 'df-first', outcome: 'queued', batch: 'b', row: 8, at: '', via: 'answer' });
    await putLedgerRow(database.db, { bank: INN, deal_id: 'D-2', n: 1, state: 'sending', batch: 'b', row: 8, prev });
    const file = join(dir, 'r.csv');
    const header = RESULTS_FILE_COLUMNS.join(',');
    const cells = (dealId: string, docflowId: string, n: number) =>
      RESULTS_FILE_COLUMNS.map((c) =>
        c === 'dealId'
          ? dealId
          : c === 'outcome'
            ? 'queued'
            : c === 'docflowId'
              ? docflowId
              : c === 'requestId'
                ? `${INN}:reg:${n}:${dealId}`
                : '',
      ).join(',');
    await writeFile(file, `${header}\n${cells('D-1', 'df-1', 0)}\n${cells('D-2', 'df-first', 0)}\n`);
    const done = await cli(['ledger', 'import', file], env());
    expect(done.code, done.stdout).toBe(0);
    expect(done.stdout).toContain('1 imported, 1 already known, 0 conflicts');
    expect(await ledgerRow(database.db, INN, 'D-1')).toMatchObject({ state: 'submitted', docflow_id: 'df-1', batch: 'b', row: 7 });
    expect(await ledgerRow(database.db, INN, 'D-2')).toMatchObject({ state: 'sending', n: 1 });
  });
});
