import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import type { Keys } from '../../../src/redis/keys.js';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { writeResults } from '../../../src/results/write-results.js';
import { csvText, HEADER, records, ROWS } from '../../helpers/fixtures.js';
import { harness, type Harness } from '../../helpers/harness.js';
import { pauseDealQueue } from '../../helpers/queue.js';
import { ledgerRows } from '../../helpers/ledger-rows.js';
import { storedOutcome, storedOutcomes } from '../../helpers/outcomes.js';

// The file's prefix, client and folder, as before; a database of each test's own.
const it = harness({ per: 'file', each: ['db'], label: 'unreadable', redis: { maxRetriesPerRequest: null } });

describe('a row that cannot be read', () => {
  // The file's fixtures and each test's database, named once for `load` below.
  let redis: Redis;
  let keys: Keys;
  let dir: string;
  let profile: BankProfile;
  let store: Harness['db'];
  const logLines: string[] = [];

  /** Loads into Redis (nothing runs the jobs), with every log line kept. */
  const load = (file: string, batch: string) => {
    const destination = new PassThrough();
    destination.on('data', (line: Buffer) => logLines.push(line.toString()));
    return loadBatch({
      file,
      batch,
      profile,
      redis,
      keys,
      db: store.db,
      logger: createLogger({ level: 'trace', destination }),
      rejects: join(dir, `${batch}.rejects`),
    });
  };
  /** What of a person's row must never leave the input file but through the rejects file. */
  const personal = (row: string[]): string[] =>
    ['dealId', 'ownerSurname', 'ownerName', 'ownerSnils', 'ownerDocNumber', 'ownerBirthPlace'].map((f) => row[HEADER.indexOf(f)]!);

  it.beforeAll(async ({ redis: r, keys: k, dir: d, profile: p }) => {
    [redis, keys, dir, profile] = [r, k, d, await p.load()];
    await pauseDealQueue(redis, keys);
  });
  it.beforeEach(({ db }) => {
    store = db;
  });

  it('has an empty dealId and one problem naming the cell count, and none of its cells outside the rejects file', async () => {
    const [good, joined, wide] = [ROWS[0]!, ROWS[1]!, ROWS[2]!];
    // Row 2 was pasted in with commas into a `;` file: the whole line is its first cell. Row 3 has one cell too many.
    const text = `${csvText([good], { delimiter: ';' })}${joined.join(',')}\n${[...wide, 'x'].join(';')}\n`;
    const file = join(dir, 'mixed.csv');
    await writeFile(file, text);
    const summary = await load(file, 'mixed');
    expect(summary).toMatchObject({ read: 3, valid: 1, invalid: 2, invalidByField: { '(row)': 2 } });

    const outcomes = await storedOutcomes(store.db, 'mixed');
    expect(await storedOutcome(store.db, 'mixed', 2)).toMatchObject({
      row: 2,
      dealId: '',
      outcome: 'invalid',
      errorMessage: `(row): has 1 cell where the header has ${HEADER.length}`,
    });
    expect(await storedOutcome(store.db, 'mixed', 3)).toMatchObject({
      row: 3,
      dealId: '',
      outcome: 'invalid',
      errorMessage: `(row): has ${HEADER.length + 1} cells where the header has ${HEADER.length}`,
    });

    const resultsFile = join(dir, 'mixed.results.csv');
    await writeResults({ redis, keys, db: store.db, batch: 'mixed', total: 3, out: resultsFile });
    const results = readFileSync(resultsFile, 'utf8');
    const everywhere = [
      JSON.stringify(outcomes),
      JSON.stringify(await redis.hgetall(keys.rows('mixed'))),
      JSON.stringify(await ledgerRows(store.db)),
      results,
      logLines.join(''),
    ];
    for (const value of [...personal(joined), ...personal(wide)]) {
      for (const text of everywhere) expect(text).not.toContain(value);
    }

    // The rejects file is the bank's own data going back: every cell of both rows, unchanged, after their row number
    // and errors (which stand first, so a narrow row needs no padding to keep them under their headers).
    const [, narrowRow, wideRow] = parse(readFileSync(join(dir, 'mixed.rejects')), {
      delimiter: ';',
      relax_column_count: true,
    }) as string[][];
    expect(narrowRow!.slice(0, 2)).toEqual(['2', expect.stringMatching(/^\(row\): has 1 cell where the header has /)]);
    expect(narrowRow!.slice(2)).toEqual([joined.join(',')]);
    expect(wideRow!.slice(0, 2)).toEqual(['3', expect.stringMatching(/^\(row\): has \d+ cells where the header has /)]);
    expect(wideRow!.slice(2)).toEqual([...wide, 'x']);
  });

  it('adds no "is required" of its own to the problem of a JSON Lines line that is not JSON', async () => {
    const [first, second] = records(ROWS.slice(0, 2)).map((r) => JSON.stringify(r));
    const file = join(dir, 'broken.jsonl');
    await writeFile(file, `${first}\n${second!.slice(0, -1)}\n`);
    const summary = await load(file, 'broken');
    expect(summary).toMatchObject({ read: 2, valid: 1, invalid: 1, invalidByField: { '(row)': 1 } });
    const outcome = await storedOutcome(store.db, 'broken', 2);
    expect(outcome).toMatchObject({ dealId: '', errorMessage: '(row): is not valid JSON (line 2)' });
  });
});
