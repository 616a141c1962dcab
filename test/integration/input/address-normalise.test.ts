import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect } from 'vitest';
import { batchHarness, changedRow, runDashboardBatch, type DashboardBatch } from '../../helpers/dashboard-batch.js';

/** Samples row 7: Малышева 120, кв 33, which the register holds once (66:41:0702050:4433). */
const MALYSHEVA = 'EKB-2026-000311';
/** Samples row 12: Баумана 15, кв 7; the register has 15/2 and 15а at that flat, never 15. */
const BAUMANA = 'KZN-2026-000054';

const it = batchHarness({ label: 'address-normalise' });

describe('a house and an apartment written with their words (д. 120, кв. 33), against the sandbox', () => {
  let night: DashboardBatch;
  let rows: Array<Record<string, string>>;
  const outcome = (dealId: string) => rows.find((r) => r.dealId === dealId)!;

  it.beforeAll(async ({ redis, keys, prefix, db, dir, sandbox, profile }) => {
    night = await runDashboardBatch({ redis, keys, prefix, db, dir, sandbox, profile }, [BAUMANA], 'night', {
      rows: [
        changedRow(MALYSHEVA, { house: 'д. 120', apartment: 'кв. 33' }),
        changedRow(MALYSHEVA, { dealId: 'EKB-NOWHERE', house: 'дом 120', apartment: 'Квартира № 999' }),
      ],
    });
    rows = parse(readFileSync(join(night.dir, 'night.results.csv')), { columns: true }) as Array<Record<string, string>>;
  });

  it('finds the object through suggest and sends the docflow for room 33 of house 120', () => {
    expect(outcome(MALYSHEVA)).toMatchObject({ outcome: 'queued', cadastralNumber: '66:41:0702050:4433' });
    const docflows = night.sandbox.docflows();
    expect(docflows).toHaveLength(1);
    expect(docflows[0]!.object).toMatchObject({
      cadastralNumber: '66:41:0702050:4433',
      address: { house: { name: '120', type: 'д' }, apartment: { type: 'кв', name: '33' } },
    });
  });

  it('names what it searched and that suggest returned nothing, when it did', () => {
    expect(outcome('EKB-NOWHERE')).toMatchObject({
      outcome: 'not_found',
      errorCode: 'NOT_FOUND',
      errorMessage:
        'searched region "Свердловская область", city "Екатеринбург", street "Малышева", house "120", apartment "999": suggest returned nothing',
    });
  });

  it('names what it searched and the candidates suggest returned, when none was equal', () => {
    const row = outcome(BAUMANA);
    expect(row).toMatchObject({ outcome: 'not_found', errorCode: 'NOT_FOUND' });
    expect(row.errorMessage).toMatch(
      /^searched region "Республика Татарстан", city "Казань", street "Баумана", house "15", apartment "7": suggest returned 2 candidates, none equal to it: \S+ \(БАУМАНА УЛ, д\. 15\/2, кв\. 7\); \S+ \(БАУМАНА УЛ, д\. 15а, кв\. 7\)$/,
    );
    // One suggest call per row, none of which has its cadastral number.
    expect(night.sandbox.stats().suggestCalls).toBe(3);
  });
});
