/** Queries compiled once and run with new values (src/db/compiled.ts), on both engines. */
import { describe, expect, it } from 'vitest';
import { runCompiled } from '../../../src/db/compiled.js';
import type { Trx } from '../../../src/db/database.js';
import type { LedgerUpdate } from '../../../src/db/schema.js';
import { deleteRow, insertRow, lockRow, submitRowUnlessOther, updateRow, type LedgerKey } from '../../../src/ledger/rows.js';
import { readOutcome, writeOutcome } from '../../../src/ledger/outcome-rows.js';
import type { OutcomeRecord } from '../../../src/domain/outcome.js';
import { useTestDatabase } from '../../helpers/test-db.js';

describe.each(['sqlite', 'postgres'] as const)('a query compiled once, on %s', (engine) => {
  const store = useTestDatabase({ engine });

  const row = (dealId: string) => ({
    bank: '7701234567',
    type: 'encumbrance_request',
    deal_id: dealId,
    n: 0,
    state: 'idle',
    batch: 'a',
    row: 1,
    updated_at: 1,
  });

  it('runs with each call its own values, in one transaction and the next', async () => {
    const db = store.db;
    await db.transaction(async (trx) => {
      expect(await insertRow(trx, row('D-1'))).toBe(true);
      expect(await insertRow(trx, row('D-2'))).toBe(true);
    });
    await db.transaction(async (trx) => {
      expect(await lockRow(trx, db.engine, { bank: '7701234567', type: 'encumbrance_request', dealId: 'D-1' })).toMatchObject({
        deal_id: 'D-1',
      });
      expect(await lockRow(trx, db.engine, { bank: '7701234567', type: 'encumbrance_request', dealId: 'D-2' })).toMatchObject({
        deal_id: 'D-2',
      });
      expect(await lockRow(trx, db.engine, { bank: '7701234567', type: 'encumbrance_request', dealId: 'D-3' })).toBeUndefined();
    });
    await db.transaction(async (trx) => {
      expect(await lockRow(trx, db.engine, { bank: '7701234567', type: 'cessation_encumbrance_request', dealId: 'D-1' })).toBeUndefined();
    });
  });

  it('refuses, at its first compile, values other than the ones the query was built with', async () => {
    const db = store.db;
    await db.transaction(async (trx) => {
      const build = () => trx.selectFrom('ledger').selectAll().where('deal_id', '=', 'D-1').where('bank', '=', 'B');
      await expect(runCompiled(trx, `swapped-${engine}`, ['B', 'D-1'], build)).rejects.toThrow(/built with other values/);
      expect(await runCompiled(trx, `in-order-${engine}`, ['D-1', 'B'], build)).toEqual([]);
    });
  });

  const key = (dealId: string): LedgerKey => ({ bank: '7701234567', type: 'encumbrance_request', dealId });
  const read = (trx: Trx, dealId: string) => trx.selectFrom('ledger').selectAll().where('deal_id', '=', dealId).executeTakeFirstOrThrow();
  /** A row without its key: two rows written alike compare equal. */
  const columns = ({ deal_id: _d, ...rest }: Record<string, unknown>) => rest;

  it('writes each set of columns as Kysely writes it, whichever set came first', async () => {
    const db = store.db;
    const sets: LedgerUpdate[] = [
      { state: 'sending', nonce: 'n-1', try_at: 5, end_at: null, updated_at: 6 },
      { end_at: 9, updated_at: 10 },
      // Kysely leaves out a column whose value is undefined: the set is the one before.
      { end_at: 11, updated_at: 12, pf: undefined },
      { state: 'idle', try_at: null, end_at: null, timeout_ms: null, lag_ms: null, nonce: null, judged_at: 13, updated_at: 13 },
      { batch: 'b', row: 2, pf: 'x1', updated_at: 14 },
    ];
    await db.transaction(async (trx) => {
      expect(await insertRow(trx, row('C-1'))).toBe(true);
      await trx.insertInto('ledger').values(row('K-1')).execute();
      expect(await insertRow(trx, { ...row('C-2'), cn: '77:01:0001001:1', answered_at: null })).toBe(true);
      await trx
        .insertInto('ledger')
        .values({ ...row('K-2'), cn: '77:01:0001001:1', answered_at: null })
        .execute();
      // A row the deal has already: nothing written, false.
      expect(await insertRow(trx, { ...row('C-1'), state: 'submitted' })).toBe(false);
      for (const set of sets) {
        await updateRow(trx, key('C-1'), set);
        await trx.updateTable('ledger').set(set).where('deal_id', '=', 'K-1').execute();
        expect(columns(await read(trx, 'C-1'))).toEqual(columns(await read(trx, 'K-1')));
      }
      expect(columns(await read(trx, 'C-2'))).toEqual(columns(await read(trx, 'K-2')));
      await deleteRow(trx, key('C-1'));
      expect(await lockRow(trx, db.engine, key('C-1'))).toBeUndefined();
    });
  });

  it("notes a docflow on the deal's row only while the deal has no other one, and tells when it did not", async () => {
    const db = store.db;
    const docflow = (docflowId: string) => ({ docflowId, outcome: 'queued', at: '2026-11-28T10:00:00.000Z', via: 'answer' as const });
    await db.transaction(async (trx) => {
      await insertRow(trx, { ...row('S-1'), state: 'sending', batch: 'a', row: 1, nonce: 'n', try_at: 1 });
      // Its own try, answered: the row is submitted, its try cleared, the row that made it named.
      expect(await submitRowUnlessOther(trx, key('S-1'), docflow('DF-1'), 20, { batch: 'c', row: 3 })).toBe(true);
      expect(await read(trx, 'S-1')).toMatchObject({
        state: 'submitted',
        docflow_id: 'DF-1',
        batch: 'c',
        row: 3,
        nonce: null,
        try_at: null,
        answered_at: 20,
        updated_at: 20,
      });
      // The same docflow again (its outcome written twice): written again.
      expect(await submitRowUnlessOther(trx, key('S-1'), docflow('DF-1'), 21, { batch: 'c', row: 3 })).toBe(true);
      // Another docflow: nothing written.
      expect(await submitRowUnlessOther(trx, key('S-1'), docflow('DF-2'), 22, { batch: 'd', row: 4 })).toBe(false);
      expect(await read(trx, 'S-1')).toMatchObject({ docflow_id: 'DF-1', batch: 'c', row: 3, updated_at: 21 });
      // No row: nothing written.
      expect(await submitRowUnlessOther(trx, key('S-2'), docflow('DF-3'), 23, { batch: 'c', row: 5 })).toBe(false);
      expect(await lockRow(trx, db.engine, key('S-2'))).toBeUndefined();
    });
  });

  it("replaces every column of a row's earlier outcome, and leaves it be when asked only if it has none", async () => {
    const db = store.db;
    const full: OutcomeRecord = {
      row: 7,
      dealId: 'O-1',
      outcome: 'ambiguous',
      attempts: 2,
      finishedAt: '2026-11-28T10:00:00.000Z',
      cadastralNumber: '77:01:0001001:1',
      httpStatus: 200,
      errorCode: 'AMBIGUOUS',
      errorMessage: 'two candidates',
      candidates: ['77:01:0001001:1', '77:01:0001001:2'],
    };
    const queued: OutcomeRecord = {
      row: 7,
      dealId: 'O-1',
      outcome: 'queued',
      attempts: 3,
      finishedAt: '2026-11-28T10:05:00.000Z',
      docflowId: 'DF-9',
      requestId: '7701234567:reg:0:O-1',
      type: 'encumbrance_request',
    };
    await db.transaction(async (trx) => {
      expect(await writeOutcome(trx, 'a', full, 1)).toBe('written');
      expect(await readOutcome(trx, 'a', 7)).toEqual(full);
      expect(await writeOutcome(trx, 'a', queued, 2)).toBe('written');
      expect(await readOutcome(trx, 'a', 7)).toEqual(queued);
      expect(await writeOutcome(trx, 'a', full, 3, true)).toBe('exists');
      expect(await readOutcome(trx, 'a', 7)).toEqual(queued);
      expect(await writeOutcome(trx, 'a', { ...full, row: 8 }, 4, true)).toBe('written');
      expect(await readOutcome(trx, 'a', 8)).toEqual({ ...full, row: 8 });
    });
  });
});
