/** The morning report's CSV: one line per batch, its counts by outcome and by state as columns a spreadsheet sums. */
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { reportCsv, reportDay, type MorningReport } from '../../src/schedule/morning-report.js';

const report: MorningReport = {
  schedule: 'nightly',
  at: '2026-11-25T04:00:00.000Z',
  batches: [
    {
      batch: 'nsk-1124',
      type: 'encumbrance_request',
      file: 'nsk, "ноябрь".csv',
      createdAt: '2026-11-24T01:00:00.000Z',
      rows: 24,
      done: true,
      registered: false,
      outcomes: { queued: 13, suspended: 4, invalid: 3, ambiguous: 2, not_found: 1, unavailable: 1 },
      states: { sent: 2, suspended: 6, completed: 7, error: 2 },
      waitingFor: { payment: 2, signature: 4 },
      oldestUnfinished: { row: 5, since: '2026-11-24T01:02:03.000Z' },
    },
    {
      batch: 'msk-1123',
      type: 'cessation_encumbrance_request',
      file: 'msk.csv',
      createdAt: '2026-11-23T01:00:00.000Z',
      rows: 1,
      done: true,
      registered: true,
      outcomes: { invalid: 1 },
      states: {},
      waitingFor: {},
    },
  ],
  totals: { batches: 2, registered: 1, payment: 2, signature: 4, error: 2 },
};

describe('reportCsv', () => {
  it('has the batch, every outcome, every docflow state and what the suspended ones wait for, as columns, zeros written', () => {
    const text = reportCsv(report);
    expect(text.split('\n')[0]).toBe(
      'batch,file,createdAt,rows,done,registered,' +
        'queued,suspended,already_submitted,invalid,not_found,ambiguous,rejected,forbidden,unavailable,failed,pending,' +
        'state_queued,state_sent,state_suspended,state_completed,state_error,' +
        'waiting_payment,waiting_signature,oldestUnfinishedSince,type',
    );
    const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      batch: 'nsk-1124',
      file: 'nsk, "ноябрь".csv',
      rows: '24',
      done: 'yes',
      registered: 'no',
      queued: '13',
      suspended: '4',
      rejected: '0',
      pending: '0',
      state_queued: '0',
      state_sent: '2',
      state_suspended: '6',
      state_completed: '7',
      state_error: '2',
      waiting_payment: '2',
      waiting_signature: '4',
      oldestUnfinishedSince: '2026-11-24T01:02:03.000Z',
      type: 'encumbrance_request',
    });
    expect(rows[1]).toMatchObject({
      batch: 'msk-1123',
      registered: 'yes',
      invalid: '1',
      state_error: '0',
      waiting_payment: '0',
      oldestUnfinishedSince: '',
      type: 'cessation_encumbrance_request',
    });
  });

  it('writes a file name a spreadsheet would run (=, @, -, +, tab) as text, with one apostrophe, and reads back unchanged', () => {
    const names = ['=HYPERLINK("http://evil.example","x").csv', '@SUM(A1:A9).csv', '-2+3.csv', '+1.csv', '\t=1.csv', "'=x.csv"];
    const text = reportCsv({ ...report, batches: names.map((file, i) => ({ ...report.batches[1]!, batch: `b${i}`, file })) });
    const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((r) => r.file)).toEqual(names.map((n) => `'${n}`));
    expect(rows.every((r) => r.rows === '1')).toBe(true);
  });

  it('is a header alone when no batch is reported', () => {
    expect(reportCsv({ ...report, batches: [] })).toBe(`${reportCsv(report).split('\n')[0]}\n`);
  });
});

describe('reportDay: the report file is named for the day in the schedule zone', () => {
  it('names the day as the schedule clock reads it, not as UTC does', () => {
    // 07:00 in Vladivostok (UTC+10) is 21:00 UTC the evening before.
    expect(reportDay(new Date('2026-11-24T21:00:00.000Z'), 'Asia/Vladivostok')).toBe('2026-11-25');
    expect(reportDay(new Date('2026-11-24T21:00:00.000Z'), 'Europe/Moscow')).toBe('2026-11-25');
    expect(reportDay(new Date('2026-11-24T20:59:59.000Z'), 'Europe/Moscow')).toBe('2026-11-24');
    expect(reportDay(new Date('2026-11-24T21:00:00.000Z'), 'UTC')).toBe('2026-11-24');
    expect(reportDay(new Date('2026-01-05T04:00:00.000Z'), 'America/New_York')).toBe('2026-01-04');
  });
});
