/**
 * Retention on both engines (src/db/prune.ts): the pruning pass deletes ledger entries unchanged
 * for --ledger-days (never one whose try is in flight), the docflows and history of deals no entry
 * is left for, and expired batches with their outcomes, a few rows a transaction; `db prune`
 * (and its --dry-run) on the command line; and one process of a fleet takes the hourly turn.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Env } from '../../../src/cli/environment.js';
import { runProgram } from '../../../src/cli/program.js';
import { DAY, loadConfig } from '../../../src/config.js';
import type { Database } from '../../../src/db/database.js';
import { openDatabase } from '../../../src/db/database.js';
import { pruneDatabase, startPruning, takeTurn } from '../../../src/db/prune.js';
import { createLogger } from '../../../src/logger.js';
import { createKeys } from '../../../src/redis/keys.js';
import { ENGINES, openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { putLedgerRow } from '../../helpers/ledger-rows.js';
import { waitFor } from '../../helpers/wait-for.js';

const BANK = '7701234567';
const KEEP_MS = 100 * DAY;

async function putDocflow(db: Database, docflowId: string, dealId: string, updatedAt: number, states: string[]): Promise<void> {
  await db.kysely
    .insertInto('docflows')
    .values({
      docflow_id: docflowId,
      bank: BANK,
      type: 'encumbrance_request',
      deal_id: dealId,
      n: 0,
      request_id: `${BANK}:reg:0:${dealId}`,
      st: states.at(-1) ?? null,
      sat: '2020-01-01T00:00:00.000Z',
      req: null,
      req_at: null,
      uin: null,
      amt: null,
      payer: null,
      rerr: null,
      files: null,
      updated_at: updatedAt,
    })
    .execute();
  for (const [i, st] of states.entries())
    await db.kysely
      .insertInto('docflow_history')
      .values({ docflow_id: docflowId, st, sat: `2020-01-0${i + 1}T00:00:00.000Z`, seen_at: updatedAt })
      .execute();
}

async function putBatch(db: Database, id: string, expiresAt: number | null, rows: number): Promise<void> {
  await db.kysely
    .insertInto('batches')
    .values({
      id,
      file: '/in/deals.csv',
      fingerprint: 'f',
      reading: '{}',
      resubmit: 0,
      files_root: '',
      state: 'loaded',
      total: rows,
      error: null,
      created_at: new Date(0).toISOString(),
      created_ms: 0,
      loaded_at: null,
      loading_until: 0,
      loader: '',
      retention_ms: DAY,
      expires_at: expiresAt,
      database_id: '',
      bank: BANK,
      type: 'encumbrance_request',
      profile_path: '',
      profile_sha256: '',
    })
    .execute();
  for (let row = 1; row <= rows; row++)
    await db.kysely
      .insertInto('outcomes')
      .values({
        batch: id,
        row,
        deal_id: `D-${row}`,
        outcome: 'queued',
        docflow_id: null,
        cn: null,
        http_status: 200,
        attempts: 1,
        finished_at: new Date(0).toISOString(),
        error_code: null,
        error_message: null,
        candidates: null,
        request_id: null,
        type: null,
        updated_at: 0,
      })
      .execute();
}

const count = async (db: Database, table: 'ledger' | 'docflows' | 'docflow_history' | 'batches' | 'outcomes'): Promise<number> =>
  Number(
    (
      await db.kysely
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Old and young entries, an old one in flight, docflows of each, an expired batch and a live one. */
async function seed(db: Database): Promise<void> {
  const now = Date.now();
  const old = now - KEEP_MS - DAY;
  const young = now - KEEP_MS + DAY;
  for (let i = 1; i <= 7; i++)
    await putLedgerRow(db, { bank: BANK, deal_id: `OLD-${i}`, state: 'submitted', docflow_id: `df-old-${i}`, updated_at: old });
  await putLedgerRow(db, { bank: BANK, deal_id: 'OLD-IDLE', state: 'idle', updated_at: old });
  await putLedgerRow(db, { bank: BANK, deal_id: 'OLD-SENDING', state: 'sending', try_at: old, updated_at: old });
  await putLedgerRow(db, { bank: BANK, deal_id: 'YOUNG', state: 'submitted', docflow_id: 'df-young', updated_at: young });
  for (let i = 1; i <= 7; i++) await putDocflow(db, `df-old-${i}`, `OLD-${i}`, old, ['queued', 'completed']);
  // A deal resubmitted lately: its first docflow is old, its entry young; the history stays.
  await putDocflow(db, 'df-young-first', 'YOUNG', old, ['queued', 'error']);
  await putDocflow(db, 'df-young', 'YOUNG', young, ['queued']);
  await putBatch(db, 'expired', now - 1000, 5);
  await putBatch(db, 'live', now + DAY, 2);
}

describe.each(ENGINES)('the pruning pass (%s)', (engine) => {
  let made: TestDatabase;
  beforeEach(async () => {
    made = await openTestDatabase(engine);
  });
  afterEach(async () => {
    await made.drop();
  });

  it('deletes old entries (never one in flight), the docflows no entry is left for, and expired batches, two rows a transaction', async () => {
    const { db } = made;
    await seed(db);
    const counts = await pruneDatabase(db, { ledgerMs: KEEP_MS, batchSize: 2 });
    expect(counts).toEqual({ ledger: 8, docflows: 7, history: 14, batches: 1, outcomes: 5 });
    const left = await db.kysely.selectFrom('ledger').select('deal_id').orderBy('deal_id').execute();
    expect(left.map((r) => r.deal_id)).toEqual(['OLD-SENDING', 'YOUNG']);
    const docflows = await db.kysely.selectFrom('docflows').select('docflow_id').orderBy('docflow_id').execute();
    expect(docflows.map((d) => d.docflow_id)).toEqual(['df-young', 'df-young-first']);
    expect(await count(db, 'docflow_history')).toBe(3);
    expect((await db.kysely.selectFrom('batches').select('id').execute()).map((b) => b.id)).toEqual(['live']);
    expect(await count(db, 'outcomes')).toBe(2);
    // A second pass finds nothing more.
    expect(await pruneDatabase(db, { ledgerMs: KEEP_MS })).toEqual({ ledger: 0, docflows: 0, history: 0, batches: 0, outcomes: 0 });
  });

  it('--dry-run counts what a pass would delete and deletes nothing', async () => {
    const { db } = made;
    await seed(db);
    const before = await Promise.all((['ledger', 'docflows', 'docflow_history', 'batches', 'outcomes'] as const).map((t) => count(db, t)));
    expect(await pruneDatabase(db, { ledgerMs: KEEP_MS, dryRun: true })).toEqual({
      ledger: 8,
      docflows: 7,
      history: 14,
      batches: 1,
      outcomes: 5,
    });
    const after = await Promise.all((['ledger', 'docflows', 'docflow_history', 'batches', 'outcomes'] as const).map((t) => count(db, t)));
    expect(after).toEqual(before);
  });

  it('gives the turn to one process of many at once, and to none again before the hour is out', async () => {
    const { db } = made;
    // Separate connections, as separate processes have.
    const others = Array.from({ length: 3 }, () => openDatabase(made.target));
    try {
      // SQLite's connections in one process would block each other's event loop: one after another
      // there (its BEGIN IMMEDIATE serializes them anyway), all at once on PostgreSQL.
      const ask = (d: Database, i: number) => takeTurn(d, 'prune', 3_600_000, `host:${i}`);
      const all = [db, ...others];
      const turns: boolean[] = [];
      if (engine === 'postgres') turns.push(...(await Promise.all(all.map(ask))));
      else for (const [i, d] of all.entries()) turns.push(await ask(d, i));
      expect(turns.filter(Boolean)).toHaveLength(1);
      expect(await takeTurn(db, 'prune', 3_600_000, 'host:9')).toBe(false);
      await db.kysely.updateTable('maintenance').set({ due_at: 0 }).execute();
      expect(await takeTurn(others[0]!, 'prune', 3_600_000, 'host:1')).toBe(true);
    } finally {
      await Promise.all(others.map((d) => d.close()));
    }
  });

  it('a long-running process prunes when its turn comes, and stops with its worker', async () => {
    const { db } = made;
    await seed(db);
    const pruning = startPruning(db, { ledgerMs: KEEP_MS, logger: createLogger({ level: 'silent' }), firstMs: 10, everyMs: 3_600_000 });
    try {
      await waitFor(async () => (await count(db, 'ledger')) === 2 && (await count(db, 'batches')) === 1, {
        timeoutMs: 10_000,
        intervalMs: 20,
        what: 'the old entries and the expired batch pruned',
      });
      expect(await count(db, 'outcomes')).toBe(2);
    } finally {
      await pruning.close();
    }
  });
});

describe('realty-batch db prune', () => {
  let made: TestDatabase;
  beforeEach(async () => {
    made = await openTestDatabase('sqlite');
  });
  afterEach(async () => {
    await made.drop();
  });

  const env = (vars: Record<string, string> = {}): Env => {
    const config = loadConfig({ REALTY_PREFIX: 'db-prune-test', ...vars });
    return {
      config,
      logger: createLogger({ level: 'silent' }),
      keys: createKeys(config.prefix),
      connect: () => Promise.reject(new Error('db prune needs no Redis')),
      database: made.target,
    };
  };
  const cli = async (args: string[], vars?: Record<string, string>) => {
    let stdout = '';
    let stderr = '';
    const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void (stdout += `${parts.join(' ')}\n`));
    const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void (stderr += `${parts.join(' ')}\n`));
    try {
      const code = await runProgram(['node', 'realty-batch', ...args], {
        environment: () => env(vars),
        output: { writeOut: (s) => (stdout += s), writeErr: (s) => (stderr += s) },
      });
      return { code, stdout, stderr };
    } finally {
      log.mockRestore();
      error.mockRestore();
    }
  };

  it('counts with --dry-run, then prunes with --ledger-days, and says what it did', async () => {
    await seed(made.db);
    const dry = await cli(['db', 'prune', '--ledger-days', '100', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      'would delete 8 ledger entries unchanged for 100 days, 7 docflows with 14 states of history, 1 expired batch with 5 outcomes',
    );
    expect(await count(made.db, 'ledger')).toBe(10);
    const done = await cli(['db', 'prune', '--ledger-days', '100', '--json']);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({
      dryRun: false,
      ledgerDays: 100,
      ledger: 8,
      docflows: 7,
      history: 14,
      batches: 1,
      outcomes: 5,
    });
  });

  it('keeps five years by default (REALTY_LEDGER_DAYS), and refuses a ledger shorter than the batches', async () => {
    await seed(made.db);
    const kept = await cli(['db', 'prune', '--json']);
    expect(JSON.parse(kept.stdout)).toMatchObject({ ledgerDays: 1830, ledger: 0, batches: 1 });
    const short = await cli(['db', 'prune', '--ledger-days', '10']);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('--ledger-days 10 is shorter than REALTY_RETENTION_DAYS (30)');
    const byEnv = await cli(['db', 'prune', '--json'], { REALTY_LEDGER_DAYS: '100' });
    expect(JSON.parse(byEnv.stdout)).toMatchObject({ ledgerDays: 100, ledger: 8 });
  });
});
