import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { readCell, safeCell } from '../../../src/input/csv-cell.js';
import { openInput } from '../../../src/input/open-input.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createRejectsWriter } from '../../../src/input/rejects.js';
import { createLogger } from '../../../src/logger.js';
import { createOutcomeStore } from '../../../src/outcomes/store.js';
import type { DealJobData } from '../../../src/queue/job-data.js';
import type { Keys } from '../../../src/redis/keys.js';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { writeAttention } from '../../../src/results/attention.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { pauseDealQueue, waitingJobs } from '../../helpers/queue.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

/** The line breaks outside quotes, as any CSV reader sees them: each one ends a row. */
function rowBreaks(text: string): string[] {
  const breaks: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '\r' && text[i + 1] === '\n') breaks.push(text.slice(i, ++i + 1));
    else if (!quoted && (ch === '\r' || ch === '\n')) breaks.push(ch);
  }
  return breaks;
}

/** Every field of every record, by row, as the loader hands them to validation. */
async function fieldsOf(file: string): Promise<Array<Record<string, string>>> {
  const out: Array<Record<string, string>> = [];
  for await (const record of (await openInput(file)).records()) out.push(record.fields);
  return out;
}

/** A sample row with cells a spreadsheet would run, a bank's own apostrophes, and a bare CR. */
function withRiskyCells(row: string[]): string[] {
  const out = [...row];
  const set = (field: string, value: string) => (out[HEADER.indexOf(field)] = value);
  set('ownerBirthPlace', '=HYPERLINK("http://x.example","г. Новосибирск")');
  set('street', '-Челюскинцев');
  set('building', '+1');
  set('ownerDocIssuerName', '@ГУ МВД России');
  set('city', '\tНовосибирск');
  set('apartment', "'=81");
  set('settlement', "'Заречный");
  set('district', 'Ленинский\rрайон');
  return out;
}

/** The loading tests' prefix, client, folder and profile once for the file; a database of each test's own. */
const it = harness({ per: 'file', each: ['db'], label: 'cells', redis: { maxRetriesPerRequest: null } });
/** The rejects file's tests: a folder of their own, nothing else. */
const rejectsIt = harness({ per: 'file', label: 'cells', engine: 'none' });

describe('cells a spreadsheet would run, written by the tool and read back', () => {
  it('reads back every value the tool writes, taking off only an apostrophe the tool would have added', () => {
    const values = ['=1+2', '+7 999', '-5', '@x', '\tx', '\rx', "'=x", "''=x", "'abc", "'", "''", 'abc', '', 'x=1', "x'=1"];
    for (const value of values) expect(readCell(safeCell(value))).toBe(value);
    expect(['=x', "'=x", "'abc", 'abc'].map(safeCell)).toEqual(["'=x", "''=x", "'abc", 'abc']);
    // A bank's own `'=x` is Excel's text marker: the value is `=x`. An apostrophe before anything else is data.
    expect(["'=x", "'abc", "'"].map(readCell)).toEqual(['=x', "'abc", "'"]);
  });
});

describe('the rejects file', () => {
  let dir: string;
  rejectsIt.beforeAll(({ dir: folder }) => {
    dir = folder;
  });

  /** Every record of `file` refused into a rejects file; its text. */
  async function refuseAll(file: string): Promise<string> {
    const input = await openInput(file);
    const rejects = createRejectsWriter(join(dir, 'out.rejects.csv'), input);
    for await (const record of input.records()) await rejects.write(record, [{ field: 'ownerSnils', message: 'checksum does not match' }]);
    await rejects.close();
    return readFileSync(join(dir, 'out.rejects.csv'), 'utf8');
  }

  rejectsIt('quotes a bare CR in an LF file and a bare LF in a CRLF file, so that other readers see no extra rows', async () => {
    const district = HEADER.indexOf('district');
    const lf = [...ROWS[0]!];
    lf[district] = 'Ленинский\rрайон';
    await writeFile(join(dir, 'lf.csv'), csvText([lf, ROWS[1]!]));
    expect(rowBreaks(await refuseAll(join(dir, 'lf.csv')))).toEqual(['\n', '\n', '\n']);

    const crlf = [...ROWS[0]!];
    crlf[district] = 'Ленинский\nрайон';
    await writeFile(join(dir, 'crlf.csv'), csvText([crlf, ROWS[1]!], { delimiter: ';', eol: '\r\n' }));
    expect(rowBreaks(await refuseAll(join(dir, 'crlf.csv')))).toEqual(['\r\n', '\r\n', '\r\n']);
  });

  rejectsIt(
    "puts an apostrophe before every cell a spreadsheet would run, and gives a bank's own apostrophes back as they were",
    async () => {
      await writeFile(join(dir, 'risky.csv'), csvText([withRiskyCells(ROWS[0]!)]));
      const [, row] = parse(await refuseAll(join(dir, 'risky.csv'))) as string[][];
      // After the rejects file's own row and errors.
      const cell = (field: string) => row![HEADER.indexOf(field) + 2];
      expect(cell('ownerBirthPlace')).toBe(`'=HYPERLINK("http://x.example","г. Новосибирск")`);
      expect([cell('street'), cell('building'), cell('ownerDocIssuerName'), cell('city')]).toEqual([
        "'-Челюскинцев",
        "'+1",
        "'@ГУ МВД России",
        "'\tНовосибирск",
      ]);
      expect([cell('district'), cell('apartment'), cell('settlement')]).toEqual(['Ленинский\rрайон', "'=81", "'Заречный"]);
    },
  );
});

describe('fixing the rejects or attention file and loading it as it is', () => {
  let keys: Keys;
  let store: UsedDatabase;
  let redis: Redis;
  let dir: string;
  let profile: BankProfile;
  const silent = createLogger({ level: 'silent' });
  const jobsOf = (batch: string): Promise<DealJobData[]> => waitingJobs(redis, keys, batch);

  it.beforeAll(async ({ keys: made, redis: client, dir: folder, profile: sample }) => {
    keys = made;
    redis = client;
    dir = folder;
    profile = await sample.load();
    // Nothing runs these jobs: they stay in the queue to be compared.
    await pauseDealQueue(redis, keys);
  });
  it.beforeEach(({ db }) => {
    store = db;
  });

  it('hands validation and the job the same values as the original file did', async () => {
    const valid = withRiskyCells(ROWS[0]!);
    const refused = withRiskyCells(ROWS[1]!);
    refused[HEADER.indexOf('ownerSnils')] = '111-111-111 11';
    const original = join(dir, 'original.csv');
    await writeFile(original, csvText([valid, refused]));
    const rejects = join(dir, 'original.rejects.csv');
    const first = await loadBatch({ file: original, batch: 'first', profile, redis, keys, db: store.db, logger: silent, rejects });
    expect(first).toMatchObject({ read: 2, valid: 1, invalid: 1, rejectsFile: rejects });
    const [job] = await jobsOf('first');
    // The gateway refused the valid row: it goes to the attention file with the refused one.
    await createOutcomeStore(redis, keys, { db: store.db }).record('first', {
      row: 1,
      dealId: job!.dealId,
      outcome: 'rejected',
      attempts: 1,
      errorCode: 'REJECTED',
      errorMessage: '-400: refused',
      finishedAt: new Date().toISOString(),
    });
    const attention = join(dir, 'attention.csv');
    expect(await writeAttention({ redis, keys, db: store.db, batch: 'first', out: attention })).toMatchObject({ rows: 2 });

    const [validFields, refusedFields] = await fieldsOf(original);
    for (const file of [rejects, attention]) {
      const text = readFileSync(file, 'utf8');
      expect(text).toContain(`"'=HYPERLINK(""http://x.example"",""г. Новосибирск"")"`);
      expect(text).toContain(`"Ленинский\rрайон"`);
    }
    expect(await fieldsOf(rejects)).toEqual([refusedFields]);
    expect(await fieldsOf(attention)).toEqual([validFields, refusedFields]);

    const again = await loadBatch({
      file: attention,
      batch: 'again',
      profile,
      redis,
      keys,
      db: store.db,
      logger: silent,
      rejects: join(dir, 'attention.rejects.csv'),
    });
    // Its leading row, outcome, hint and errors are ours: not read, not unknown, not repeated in its own rejects file.
    expect(again).toMatchObject({ read: 2, valid: 1, invalid: 1, unknownColumns: [] });
    // The attention file is in Russian Excel's form (BOM, ';'): its rejects file keeps that form.
    const [againHeader, againRefused] = parse(readFileSync(join(dir, 'attention.rejects.csv')), {
      bom: true,
      delimiter: ';',
    }) as string[][];
    expect(againHeader).toEqual(['row', 'errors', ...HEADER]);
    expect(againRefused!.slice(0, 2)).toEqual(['2', expect.stringMatching(/^ownerSnils: /)]);
    const [rerun] = await jobsOf('again');
    expect(rerun!.deal).toEqual(job!.deal);
    expect(job!.deal!.owners[0]!.birthPlace).toBe('=HYPERLINK("http://x.example","г. Новосибирск")');
  });
});
