/**
 * The database's disk per row of each table (docs/database.md, "Sizing"): N representative rows
 * of a night written with the real schema (the migrations) on SQLite and on PostgreSQL, then
 * measured per table with its indexes: SQLite's `dbstat` (pages of the table and of its
 * indexes), PostgreSQL's `pg_total_relation_size` (heap, indexes, TOAST) after VACUUM ANALYZE.
 *
 *   node dist/bench/db-size.js [rows=20000] [postgres://…/db to measure on PostgreSQL too]
 *
 * A row as a night leaves it: a submitted ledger entry (property kept, the persons' filter), its
 * docflow as the feed last showed it, three states of history (queued, sent, completed), its
 * outcome in its batch (the results file's columns), one batch a night.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';

const TABLES = ['ledger', 'docflows', 'docflow_history', 'outcomes', 'batches'] as const;
const BANK = '7701934587';
const CHUNK = 1000;

async function fill(db: Database, rows: number): Promise<void> {
  const now = Date.now();
  const iso = new Date(now).toISOString();
  const batch = 'deals-2026-11-24-3f9a1c2b7d4e';
  await db.kysely
    .insertInto('batches')
    .values({
      id: batch,
      file: '/var/lib/realty-batch/inbox/deals-2026-11-24.csv',
      fingerprint: 'a'.repeat(64),
      reading: '{"format":"csv","encoding":"utf8","delimiter":";"}',
      resubmit: 0,
      files_root: '',
      state: 'loaded',
      total: rows,
      error: null,
      created_at: iso,
      created_ms: now,
      loaded_at: iso,
      loading_until: 0,
      loader: 'host:1234',
      retention_ms: 30 * 86_400_000,
      expires_at: now + 30 * 86_400_000,
      database_id: randomUUID(),
      bank: BANK,
      type: 'encumbrance_request',
      profile_path: '/etc/realty-batch/bank.json',
      profile_sha256: 'b'.repeat(64),
    })
    .execute();
  for (let from = 0; from < rows; from += CHUNK) {
    const ids = Array.from({ length: Math.min(CHUNK, rows - from) }, (_, i) => from + i + 1);
    const made = ids.map((row) => ({ row, dealId: `DEAL-${String(row).padStart(7, '0')}`, docflowId: randomUUID() }));
    const cn = (row: number) => `54:35:0${String(41_000 + (row % 900)).padStart(6, '0')}:${row % 10_000}`;
    await db.transaction(async (trx) => {
      await trx
        .insertInto('ledger')
        .values(
          made.map(({ row, dealId, docflowId }) => ({
            bank: BANK,
            type: 'encumbrance_request',
            deal_id: dealId,
            n: 0,
            state: 'submitted',
            batch,
            row,
            job: null,
            try_at: null,
            end_at: null,
            timeout_ms: null,
            lag_ms: null,
            nonce: null,
            docflow_id: docflowId,
            outcome: 'queued',
            at: iso,
            via: 'answer',
            cn: cn(row),
            addr: '9f86d081884c7d65',
            pf: '1AbCdEfGh',
            prev: null,
            updated_at: now,
          })),
        )
        .execute();
      await trx
        .insertInto('docflows')
        .values(
          made.map(({ dealId, docflowId }) => ({
            docflow_id: docflowId,
            bank: BANK,
            type: 'encumbrance_request',
            deal_id: dealId,
            n: 0,
            request_id: `${BANK}:reg:0:${dealId}`,
            st: 'completed',
            sat: iso,
            req: null,
            req_at: null,
            uin: null,
            amt: null,
            payer: null,
            rerr: null,
            files: '2',
            updated_at: now,
          })),
        )
        .execute();
      await trx
        .insertInto('docflow_history')
        .values(
          made.flatMap(({ docflowId }) =>
            ['queued', 'sent', 'completed'].map((st) => ({ docflow_id: docflowId, st, sat: iso, seen_at: now })),
          ),
        )
        .execute();
      await trx
        .insertInto('outcomes')
        .values(
          made.map(({ row, dealId, docflowId }) => ({
            batch,
            row,
            deal_id: dealId,
            outcome: 'queued',
            docflow_id: docflowId,
            cn: cn(row),
            http_status: 200,
            attempts: 1,
            finished_at: iso,
            error_code: null,
            error_message: null,
            candidates: null,
            request_id: `${BANK}:reg:0:${dealId}`,
            type: 'encumbrance_request',
            updated_at: now,
          })),
        )
        .execute();
    });
  }
}

/** Bytes per table, its indexes included. */
async function sizes(db: Database): Promise<Record<string, number>> {
  if (db.engine === 'sqlite') {
    await sql`vacuum`.execute(db.kysely);
    const { rows } = await sql<{ tbl: string; bytes: number }>`
      select m.tbl_name as tbl, sum(s.pgsize) as bytes from dbstat s join sqlite_master m on m.name = s.name group by m.tbl_name`.execute(
      db.kysely,
    );
    return Object.fromEntries(rows.map((r) => [r.tbl, Number(r.bytes)]));
  }
  await sql`vacuum analyze`.execute(db.kysely);
  const out: Record<string, number> = {};
  for (const t of TABLES) {
    const { rows } = await sql<{ bytes: string }>`select pg_total_relation_size(${t}::regclass) as bytes`.execute(db.kysely);
    out[t] = Number(rows[0]!.bytes);
  }
  return out;
}

async function measure(db: Database, rows: number): Promise<void> {
  await migrate(db);
  await fill(db, rows);
  const bytes = await sizes(db);
  let total = 0;
  console.log(`${db.engine}: ${rows} rows`);
  for (const t of TABLES) {
    const b = bytes[t] ?? 0;
    total += b;
    const perRow = t === 'batches' ? b : b / rows;
    console.log(
      `  ${t.padEnd(16)} ${(b / 1e6).toFixed(2).padStart(8)} MB  ${perRow.toFixed(0).padStart(6)} bytes ${t === 'batches' ? 'a batch' : 'a row'}`,
    );
  }
  console.log(
    `  all              ${(total / 1e6).toFixed(2).padStart(8)} MB  ${(total / rows).toFixed(0).padStart(6)} bytes a row of a night`,
  );
}

const rows = Number(process.argv[2] ?? 20_000);
const dir = mkdtempSync(join(tmpdir(), 'realty-db-size-'));
const sqlite = openDatabase({ engine: 'sqlite', path: join(dir, 'size.db') });
try {
  await measure(sqlite, rows);
} finally {
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });
}
const pgUrl = process.argv[3];
if (pgUrl) {
  const pg = openDatabase({ engine: 'postgres', url: pgUrl });
  try {
    await measure(pg, rows);
  } finally {
    await pg.close();
  }
}
