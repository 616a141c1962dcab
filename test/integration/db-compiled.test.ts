/** Queries compiled once and run with new values (src/db/compiled.ts), on both engines. */
import { describe, expect, it } from 'vitest';
import { runCompiled } from '../../src/db/compiled.js';
import { lockRow, insertRow } from '../../src/ledger/rows.js';
import { useTestDatabase } from '../helpers/test-db.js';

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
});
