/**
 * The ledger and the docflows' states as tests set them up and read them: straight in the
 * database's tables, as another host, an earlier run or the feed would have left them.
 */
import type { Database } from '../../src/db/database.js';
import type { DocflowRow, LedgerRow } from '../../src/db/schema.js';
import { REGISTRATION, type DocflowType } from '../../src/ledger/entry.js';

/** A ledger row with what a test gives; the rest as a claim with no try would have it. */
export async function putLedgerRow(db: Database, row: Partial<LedgerRow> & { bank: string; deal_id: string }): Promise<void> {
  const full: LedgerRow = {
    type: REGISTRATION,
    n: 0,
    state: 'idle',
    batch: '',
    row: 0,
    job: null,
    try_at: null,
    end_at: null,
    timeout_ms: null,
    lag_ms: null,
    nonce: null,
    answered_at: null,
    judged_at: null,
    docflow_id: null,
    outcome: null,
    at: null,
    via: null,
    cn: null,
    addr: null,
    pf: null,
    prev: null,
    updated_at: Date.now(),
    ...row,
  };
  await db.kysely
    .insertInto('ledger')
    .values(full)
    .onConflict((c) =>
      c.columns(['bank', 'type', 'deal_id']).doUpdateSet((eb) => {
        const set: Record<string, unknown> = {};
        for (const k of Object.keys(full)) if (!['bank', 'type', 'deal_id'].includes(k)) set[k] = eb.ref(`excluded.${k}` as 'excluded.n');
        return set;
      }),
    )
    .execute();
}

/** The deal's ledger row, or undefined. */
export async function ledgerRow(
  db: Database,
  bank: string,
  dealId: string,
  type: DocflowType = REGISTRATION,
): Promise<LedgerRow | undefined> {
  return db.kysely
    .selectFrom('ledger')
    .selectAll()
    .where('bank', '=', bank)
    .where('type', '=', type)
    .where('deal_id', '=', dealId)
    .executeTakeFirst();
}

/** Every ledger row, by dealId. */
export async function ledgerRows(db: Database): Promise<LedgerRow[]> {
  return db.kysely.selectFrom('ledger').selectAll().orderBy('deal_id').execute();
}

/** A docflow's state row as the feed left it, or undefined. */
export async function docflowRow(db: Database, docflowId: string): Promise<DocflowRow | undefined> {
  return db.kysely.selectFrom('docflows').selectAll().where('docflow_id', '=', docflowId).executeTakeFirst();
}

/** A docflow's state as a test sets it up (as the feed would have stored it). */
export async function putDocflowRow(
  db: Database,
  row: Partial<DocflowRow> & { docflow_id: string; bank: string; deal_id: string },
): Promise<void> {
  const full: DocflowRow = {
    type: REGISTRATION,
    n: 0,
    request_id: '',
    st: null,
    sat: null,
    req: null,
    req_at: null,
    uin: null,
    amt: null,
    payer: null,
    rerr: null,
    files: null,
    updated_at: Date.now(),
    ...row,
  };
  await db.kysely.insertInto('docflows').values(full).execute();
}

/** The feed's row (its cursor and counters), or undefined before a follower took a cursor. */
export async function feedRow(db: Database) {
  return db.kysely.selectFrom('feed').selectAll().where('id', '=', 1).executeTakeFirst();
}

/** Every text column of every table of the database, one line a row: what a scan for personal data reads. */
export async function databaseText(db: Database): Promise<{ tables: string[]; text: string }> {
  const tables: string[] = [];
  const lines: string[] = [];
  for (const table of await db.kysely.introspection.getTables()) {
    tables.push(table.name);
    const columns = table.columns.filter((c) => /char|text|clob|json/i.test(c.dataType)).map((c) => c.name);
    if (columns.length === 0) continue;
    const rows = await db.kysely
      .selectFrom(table.name as 'ledger')
      .select(columns as Array<'bank'>)
      .execute();
    for (const r of rows) lines.push(`${table.name}: ${JSON.stringify(r)}`);
  }
  return { tables: tables.sort(), text: lines.join('\n') };
}
