/**
 * An ERR_UNCERTAIN row learns its docflow in the same transaction as the ledger's entry
 * (src/ledger/outcome-rows.ts, settleUncertain) once the entry has it (an operator named it,
 * or the news feed found it). The stored outcome comes back whole: its dealId (a slash, Cyrillic
 * letters), its finish time to the millisecond, its attempts, and no cadastral number where it
 * had none.
 */
import { describe, expect } from 'vitest';
import { storePage } from '../../../src/feed/feed-store.js';
import { createLedger } from '../../../src/ledger/ledger.js';
import { requestIdOf } from '../../../src/ledger/entry.js';
import { createOutcomeStore } from '../../../src/outcomes/store.js';
import type { OutcomeRecord } from '../../../src/domain/outcome.js';
import { harness } from '../../helpers/harness.js';
import { ledgerRow, putLedgerRow } from '../../helpers/ledger-rows.js';
import { putOutcome } from '../../helpers/outcomes.js';

const BANK = '7701234567';
// A dealId with a slash and Cyrillic letters; no cadastral number.
const DEAL = 'ДКП/2026-7';

// One Redis client for the file; a prefix and a database for each test, as before.
const it = harness({ per: 'file', each: ['prefix', 'db'], label: 'settle-forms' });

describe("an uncertain row's outcome settled in the database", () => {
  const uncertain: OutcomeRecord = {
    row: 3,
    dealId: DEAL,
    outcome: 'failed',
    attempts: 4,
    httpStatus: 504,
    errorCode: 'ERR_UNCERTAIN',
    errorMessage: 'no answer',
    finishedAt: '2026-11-25T03:45:15.123Z',
  };

  it.beforeEach(async ({ keys, db: database }) => {
    // Row 3 of batch b tried the deal; the try ended without an answer a few seconds ago.
    const now = await database.db.now();
    await putLedgerRow(database.db, {
      bank: BANK,
      deal_id: DEAL,
      n: 0,
      state: 'sending',
      batch: 'b',
      row: 3,
      job: `${keys.bullPrefix}:deals:b.RC0x`,
      try_at: now - 5000,
      end_at: now - 4000,
      timeout_ms: 1000,
      lag_ms: 1000,
      nonce: 'run-1',
    });
    await putOutcome(database.db, 'b', uncertain);
  });

  const settled = {
    row: 3,
    dealId: DEAL,
    outcome: 'queued',
    docflowId: 'df-1',
    httpStatus: 200,
    attempts: 4,
    finishedAt: '2026-11-25T03:45:15.123Z',
  };

  it('named by an operator: its finish time to the ms kept, its error gone', async ({ redis, keys, db: database }) => {
    const ledger = createLedger(redis, keys, database.db, { timeoutMs: 1000, feedLagMs: 1000 });
    expect(await ledger.resolve(BANK, DEAL, { docflowId: 'df-1', outcome: 'queued' })).toBe('resolved');
    expect(await ledgerRow(database.db, BANK, DEAL)).toMatchObject({ state: 'submitted', docflow_id: 'df-1', via: 'operator' });
    const [record] = await createOutcomeStore(redis, keys, { db: database.db }).range('b', 3, 3);
    expect(record).toMatchObject(settled);
    expect(record!.errorCode).toBeUndefined();
    expect(record!.cadastralNumber).toBeUndefined();
    expect(record!.errorMessage).toMatch(/named by an operator/);
  });

  it('found in the news feed', async ({ redis, keys, db: database }) => {
    const { db } = database;
    const since = (await db.now()) - 60_000;
    await db.kysely
      .insertInto('feed')
      .values({ id: 1, cursor: '0', since, covered_at: since, page_max: 0, items: 0, resolved: 0, unknown: 0, conflicts: 0, followed: 0 })
      .execute();
    await redis.set(keys.feedLock, 'me', 'PX', 60_000);
    const stored = await storePage(redis, keys, db, {
      lockToken: 'me',
      after: '0',
      lastToken: '1',
      readAt: await db.now(),
      items: [
        {
          token: '1',
          date: '2026-11-25T03:46:00.000Z',
          docflow: { docflowId: 'df-1', docflowType: 'encumbrance_request', state: 'queued', requestId: requestIdOf(BANK, DEAL) },
        },
      ],
    });
    // The row has its outcome: nothing to wake.
    expect(stored).toMatchObject({ kind: 'stored', resolved: 1, wake: [] });
    expect(await ledgerRow(db, BANK, DEAL)).toMatchObject({ state: 'submitted', docflow_id: 'df-1', via: 'feed' });
    const [record] = await createOutcomeStore(redis, keys, { db: database.db }).range('b', 3, 3);
    expect(record).toMatchObject(settled);
    expect(record!.errorCode).toBeUndefined();
    expect(record!.errorMessage).toMatch(/found in the news feed/);
  });
});
