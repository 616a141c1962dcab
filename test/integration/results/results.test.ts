/**
 * The results file written from the outcomes in Redis and the database: a line per row in input
 * order (pending where none yet), for Russian Excel with --excel, line breaks quoted, JSON Lines.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect } from 'vitest';
import { createOutcomeStore } from '../../../src/outcomes/store.js';
import { RESULT_COLUMNS, RESULTS_FILE_COLUMNS } from '../../../src/domain/outcome.js';
import { writeResults } from '../../../src/results/write-results.js';
import { harness } from '../../helpers/harness.js';

// The outcomes written once for the file, read by each test.
const it = harness({ per: 'file', label: 'results' });

describe('the results file', () => {
  it.beforeAll(async ({ redis, keys, db: store }) => {
    const outcomes = createOutcomeStore(redis, keys, { db: store.db });
    await outcomes.record('b', {
      row: 1,
      dealId: 'D-1',
      outcome: 'queued',
      docflowId: 'f-1',
      cadastralNumber: '54:35:1:1',
      httpStatus: 200,
      attempts: 1,
      finishedAt: '2026-11-21T01:00:00.000Z',
    });
    await outcomes.record('b', {
      row: 3,
      dealId: '=HYPERLINK("x")',
      outcome: 'rejected',
      httpStatus: 400,
      attempts: 1,
      errorCode: 'validation',
      errorMessage: '-1 is not; a value',
      finishedAt: '2026-11-21T01:00:01.000Z',
    });
    await outcomes.record('b', {
      row: 4,
      dealId: 'D-4',
      outcome: 'rejected',
      httpStatus: 400,
      attempts: 1,
      errorCode: 'validation',
      errorMessage: 'the gateway\rsaid\nthis',
      finishedAt: '2026-11-21T01:00:02.000Z',
    });
    await redis.hset(keys.rows('b'), '2', 'D-2');
  });
  it('has one line per row in input order, pending where a row has no outcome yet', async ({ redis, keys, db: store, dir }) => {
    const out = join(dir, 'r.csv');
    const summary = await writeResults({ redis, keys, db: store.db, batch: 'b', total: 3, out });
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    // The contract's ten columns first, unchanged; the docflow's state after them, then its origin (ledger import).
    expect(lines[0]).toBe(
      `${RESULT_COLUMNS.join(',')},state,stateAt,requirement,paymentUin,paymentAmount,registryError,requestId,type,otherDocflowId`,
    );
    expect(lines[0]).toBe(RESULTS_FILE_COLUMNS.join(','));
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 3).join(','))).toEqual([
      '1,D-1,queued',
      '2,D-2,pending',
      `3,"'=HYPERLINK(""x"")",rejected`,
    ]);
    expect(summary.counts).toMatchObject({ queued: 1, pending: 1, rejected: 1 });
  });

  it('writes for Russian Excel with --excel: BOM, semicolons, CRLF, and cells a spreadsheet will not run', async ({
    redis,
    keys,
    db: store,
    dir,
  }) => {
    const out = join(dir, 'r-excel.csv');
    await writeResults({ redis, keys, db: store.db, batch: 'b', total: 3, out, excel: true });
    const bytes = readFileSync(out);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.subarray(3).toString('utf8');
    expect(text.split('\r\n')[0]).toBe(RESULTS_FILE_COLUMNS.join(';'));
    expect(text).toContain(`"'-1 is not; a value"`);
    expect(text).not.toMatch(/[^\r]\n/);
  });

  it('quotes a line break inside a cell, so that every reader sees one row for it, under --excel too', async ({
    redis,
    keys,
    db: store,
    dir,
  }) => {
    for (const excel of [false, true]) {
      const out = join(dir, `r-breaks-${excel}.csv`);
      await writeResults({ redis, keys, db: store.db, batch: 'b', total: 4, out, excel });
      const rows = parse(readFileSync(out), { columns: true, bom: true, delimiter: excel ? ';' : ',', relax_column_count: false }) as Array<
        Record<string, string>
      >;
      expect(rows.map((r) => r.row)).toEqual(['1', '2', '3', '4']);
      expect(rows[3]!.errorMessage).toBe('the gateway\rsaid\nthis');
      // Quoted: a reader that ends a row at a bare CR (or at LF in a CRLF file) does not cut it.
      expect(readFileSync(out, 'utf8')).toContain('"the gateway\rsaid\nthis"');
    }
  });

  it('writes JSON Lines when the file ends in .jsonl', async ({ redis, keys, db: store, dir }) => {
    const out = join(dir, 'r.jsonl');
    await writeResults({ redis, keys, db: store.db, batch: 'b', total: 3, out });
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r.outcome)).toEqual(['queued', 'pending', 'rejected']);
    expect(Object.keys(rows[0]!)).toEqual([...RESULTS_FILE_COLUMNS]);
  });
});
