/**
 * Migration 6 (src/db/migrations/0006-docflows-indexes.ts) on both engines: the `docflows` table
 * keeps the indexes its queries read and no others, a database of version 5 with docflows in it
 * upgrades keeping them, and on SQLite the queries that read the merged index still search it
 * (no scan of the table).
 */
import BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/db/database.js';
import { migrate } from '../../../src/db/migrate.js';
import { MIGRATIONS } from '../../../src/db/migrations/index.js';
import { createTestTarget, ENGINES, openTestDatabase, type TestTarget } from '../../helpers/database.js';

const KEPT = ['docflows_deal_key', 'docflows_state', 'docflows_updated'];

/** The docflows table's own indexes by name (the primary key's left out: each engine names it its way). */
async function docflowsIndexes(db: Database): Promise<string[]> {
  const conn = db.kysely as unknown as Kysely<unknown>;
  const rows =
    db.engine === 'sqlite'
      ? (
          await sql<{
            name: string;
          }>`select name from sqlite_master where type = 'index' and tbl_name = 'docflows' and sql is not null`.execute(conn)
        ).rows
      : (
          await sql<{
            name: string;
          }>`select indexname as name from pg_indexes where tablename = 'docflows' and indexname <> 'docflows_pkey'`.execute(conn)
        ).rows;
  return rows.map((r) => r.name).sort();
}

const DOCFLOW = {
  docflow_id: 'df-1',
  bank: '7700000001',
  type: 'encumbrance_request',
  deal_id: 'D-1',
  n: 0,
  request_id: '7700000001:reg:0:D-1',
  st: 'sent',
  sat: '2026-11-29T00:00:00Z',
  updated_at: 1,
};

describe.each(ENGINES)('the docflows indexes on %s', (engine) => {
  const opened: TestTarget[] = [];
  afterEach(async () => {
    for (const t of opened.splice(0)) await t.drop();
  });

  it('keeps the indexes its queries read, and no others', async () => {
    const t = await openTestDatabase(engine);
    opened.push(t);
    expect(await docflowsIndexes(t.db)).toEqual(KEPT);
  });

  it('upgrades a database of version 5 keeping its docflows', async () => {
    const made = await createTestTarget(engine, { empty: true });
    opened.push(made);
    const db = openDatabase(made.target);
    try {
      const conn = db.kysely as unknown as Kysely<unknown>;
      await sql`create table schema_migrations (version integer primary key, name text not null, applied_at text not null)`.execute(conn);
      for (const m of MIGRATIONS.filter((m) => m.version <= 5)) {
        await m.up(conn, db.engine);
        await sql`insert into schema_migrations (version, name, applied_at) values (${m.version}, ${m.name}, '2026-11-01T00:00:00Z')`.execute(
          conn,
        );
      }
      expect(await docflowsIndexes(db)).toEqual([
        'docflows_deal',
        'docflows_deal_id',
        'docflows_request',
        'docflows_state',
        'docflows_updated',
      ]);
      await db.kysely.insertInto('docflows').values(DOCFLOW).execute();
      expect(await migrate(db)).toEqual(MIGRATIONS.filter((m) => m.version > 5).map((m) => m.version));
      expect(await docflowsIndexes(db)).toEqual(KEPT);
      const found = await db.kysely.selectFrom('docflows').selectAll().where('deal_id', '=', 'D-1').execute();
      expect(found).toMatchObject([{ docflow_id: 'df-1', bank: DOCFLOW.bank, st: 'sent' }]);
    } finally {
      await db.close();
    }
  });
});

describe('the docflows queries on SQLite', () => {
  it('search the merged index: by dealId or docflowId, and a deal’s docflows', async () => {
    const t = await openTestDatabase('sqlite');
    try {
      if (t.target.engine !== 'sqlite') throw new Error('not SQLite');
      const raw = new BetterSqlite3(t.target.path, { readonly: true });
      try {
        const plan = (text: string, ...values: unknown[]) =>
          (raw.prepare(`explain query plan ${text}`).all(...values) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
        // src/ledger/history.ts: the dashboard's search, then one deal's docflows.
        const search = plan(
          'select bank, type, deal_id, docflow_id from docflows where docflow_id = ? or deal_id = ? order by bank, type, deal_id limit 51',
          'q',
          'q',
        );
        expect(search).toContain('docflows_deal_key (deal_id=?)');
        expect(search).not.toMatch(/SCAN docflows\b(?! USING)/);
        const deal = plan(
          'select docflow_id, n, st from docflows where bank = ? and type = ? and deal_id = ? order by n, docflow_id',
          'b',
          't',
          'd',
        );
        expect(deal).toContain('SEARCH docflows USING INDEX docflows_deal_key (deal_id=? AND bank=? AND type=?)');
      } finally {
        raw.close();
      }
    } finally {
      await t.drop();
    }
  });
});
