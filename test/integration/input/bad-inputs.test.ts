import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import type { Keys } from '../../../src/redis/keys.js';
import { childEnv, CLI, ROOT } from '../../helpers/cli.js';
import { csvText, HEADER, records, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';

const BAD = join(ROOT, 'test/fixtures/bad');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Peak resident memory of the command, MB (GNU time). */
  peakMb: number;
}

/** `realty-batch load` under GNU time, for its peak memory. */
function load(file: string, prefix: string, batch: string, profile = 'samples/bank-profile.json'): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      '/usr/bin/time',
      [
        '-f',
        'peak-kb %M',
        process.execPath,
        CLI,
        'load',
        file,
        '--profile',
        profile,
        '--batch',
        batch,
        '--rejects',
        join(tmpdir(), `${prefix}-${batch}.rejects`),
      ],
      {
        cwd: ROOT,
        env: childEnv({ REDIS_URL, REALTY_PREFIX: prefix, LOG_LEVEL: 'silent' }),
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    // 'close': GNU time's line is the last output, and may still be in the pipe at 'exit' (test/helpers/cli.ts).
    child.once('close', (code) => {
      const peak = /peak-kb (\d+)\n?$/.exec(stderr);
      // GNU time adds its own two lines: the figure, and "Command exited with non-zero status N".
      const own = stderr.replace(/peak-kb \d+\n?$/, '').replace(/Command exited with non-zero status \d+\n$/, '');
      resolve({ code, stdout, stderr: own, peakMb: peak ? Number(peak[1]) / 1024 : NaN });
    });
  });
}

// No database: `load` is given none, as before.
const it = harness({ per: 'file', label: 'bad', engine: 'none' });

describe('bad inputs end in one clear sentence or in refused rows, never a crash', () => {
  let prefix: string;
  let keys: Keys;
  let dir: string;
  let redis: Redis;
  const jobsOf = async (batch: string) => (await redis.keys(`${keys.bullPrefix}:deals:${batch}.*`)).filter((k) => !k.endsWith(':logs'));

  it.beforeAll(async ({ prefix: made, keys: madeKeys, dir: folder, redis: client }) => {
    prefix = made;
    keys = madeKeys;
    dir = folder;
    redis = client;
    // Too big to keep in the repository: made here.
    const field = HEADER.indexOf('ownerBirthPlace');
    const huge = [...ROWS[0]!];
    huge[field] = 'x'.repeat(10 * 1024 * 1024);
    await writeFile(join(dir, 'ten-mb-field.csv'), csvText([ROWS[1]!, huge, ROWS[2]!]));
    // A quote left open: the record runs on over short lines past 4 MiB, the rest of the file inside it.
    const open = `${csvText([ROWS[1]!])}"${`${'y'.repeat(100)}\n`.repeat(50_000)}${csvText([ROWS[2]!]).split('\n')[1]}\n`;
    await writeFile(join(dir, 'open-quote.csv'), open);
    // The red team's file: one line of 188 million commas between two good rows (it aborted the process, exit 133).
    const commas = Buffer.alloc(188_000_000, ',');
    const [head, before] = csvText([ROWS[1]!]).trimEnd().split('\n');
    await writeFile(
      join(dir, 'commas.csv'),
      Buffer.concat([Buffer.from(`${head}\n${before}\n`), commas, Buffer.from(`\n${csvText([ROWS[2]!]).split('\n')[1]}\n`)]),
    );
    // A header Excel ended with CRLF, rows appended with LF (the five rows were read as one).
    const lines = csvText(ROWS.slice(0, 5)).trimEnd().split('\n');
    await writeFile(join(dir, 'crlf-header-lf-rows.csv'), `${lines[0]}\r\n${lines.slice(1).join('\n')}\n`);
    // Classic Mac OS line ends, CR alone.
    await writeFile(join(dir, 'cr-only.csv'), `${lines.join('\r')}\r`);
    // Rows wider than any spreadsheet, inside one 64 KiB chunk and across several.
    await writeFile(
      join(dir, 'wide-rows.csv'),
      `${csvText([ROWS[1]!])}${'a,'.repeat(20_000)}\n${','.repeat(200_000)}\n${csvText([ROWS[2]!]).split('\n')[1]}\n`,
    );
    const extra = Array.from({ length: 16_000 }, (_, i) => `x${i}`);
    await writeFile(
      join(dir, 'sixteen-thousand-columns.csv'),
      csvText(
        ROWS.slice(0, 3).map((r) => [...r, ...extra.map(() => '')]),
        { header: [...HEADER, ...extra] },
      ),
    );
    const tooMany = Array.from({ length: 20_000 }, (_, i) => `x${i}`);
    await writeFile(
      join(dir, 'twenty-thousand-columns.csv'),
      csvText([[...ROWS[0]!, ...tooMany.map(() => '')]], { header: [...HEADER, ...tooMany] }),
    );
    // Two good records around one nested 100,000 deep in arrays and one in objects.
    const [first, second] = records(ROWS.slice(0, 2)).map((r) => JSON.stringify(r));
    const deep = ['['.repeat(100_000) + ']'.repeat(100_000), `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`];
    await writeFile(join(dir, 'deeply-nested.json'), `[${[first, ...deep, second].join(',\n')}]`);
    await writeFile(join(dir, 'deeply-nested.jsonl'), `${[first, ...deep, second].join('\n')}\n`);
    await writeFile(join(dir, 'records.json'), JSON.stringify(records(ROWS.slice(0, 2))));
  });

  const oneSentence = (stderr: string) => {
    expect(stderr).toMatch(/^realty-batch: [^\n]+\.\n$/);
    expect(stderr).not.toMatch(/\n\s+at /);
  };

  it.each([
    ['empty.csv', /is empty/],
    ['garbage.csv', /no header row with known field names|not valid UTF-8|mixes UTF-8/],
    ['truncated-utf8.csv', /not valid UTF-8 near byte \d+|mixes UTF-8 text with bytes that are not UTF-8 \(near byte \d+\)/],
    ['unbalanced-quotes.csv', /cannot be read as CSV near line \d+/],
    ['wrong-delimiter.csv', /no header row with known field names/],
    ['not-an-array.json', /deals/],
  ])('stops on %s with one sentence, exit 1, and enqueues nothing', async (name, message) => {
    const batch = name.replace(/\W/g, '-');
    const result = await load(join(BAD, name), prefix, batch);
    expect(result.code).toBe(1);
    oneSentence(result.stderr);
    expect(result.stderr).toMatch(message);
    expect(await jobsOf(batch)).toEqual([]);
  });

  it('loads header-only.csv as a night with no deals: exit 0, nothing enqueued (issue 40, point 7)', async () => {
    const result = await load(join(BAD, 'header-only.csv'), prefix, 'header-only');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('read 0, valid 0, invalid 0, enqueued 0');
    expect(await jobsOf('header-only')).toEqual([]);
  });

  /** The refused rows of a load's rejects file: row and errors. */
  const refusedRows = (batch: string) =>
    (parse(readFileSync(join(tmpdir(), `${prefix}-${batch}.rejects`)), { columns: true }) as Array<Record<string, string>>).map((r) => ({
      row: r.row,
      errors: r.errors,
    }));

  it.each([
    [
      'ten-mb-field.csv',
      'a row of 10 MB',
      /^\(row\): is 10,48\d,\d{3} bytes long, more than the 4 MiB a row may have: none of its cells is read$/,
    ],
    [
      'commas.csv',
      'the line of 188 million commas (it aborted the process)',
      /^\(row\): is 188,000,000 bytes long and has 188,000,001 cells, more than the 4 MiB and 16,384 cells a row may have: none of its cells is read$/,
    ],
  ])('refuses %s, %s, as one row naming its size, and loads the rows around it in bounded memory', async (name, _, problem) => {
    const batch = name.replace(/\W/g, '-');
    const result = await load(join(dir, name), prefix, batch);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('read 3, valid 2, invalid 1');
    expect(result.peakMb).toBeLessThan(300);
    expect(await jobsOf(batch)).toHaveLength(2);
    expect(refusedRows(batch)).toEqual([{ row: '2', errors: expect.stringMatching(problem) }]);
  });

  it('refuses rows of more cells than a spreadsheet has, whether a chunk holds them or not, and loads the others', async () => {
    const result = await load(join(dir, 'wide-rows.csv'), prefix, 'wide-rows');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('read 4, valid 2, invalid 2');
    expect(refusedRows('wide-rows')).toEqual([
      { row: '2', errors: '(row): has 20,001 cells, more than the 16,384 cells a row may have: none of its cells is read' },
      { row: '3', errors: '(row): has 200,001 cells, more than the 16,384 cells a row may have: none of its cells is read' },
    ]);
  });

  it.each([
    ['crlf-header-lf-rows.csv', 'a CRLF header with LF rows'],
    ['cr-only.csv', 'CR alone (classic Mac OS)'],
  ])('reads %s, %s, as the rows it holds', async (name) => {
    const batch = name.replace(/\W/g, '-');
    const result = await load(join(dir, name), prefix, batch);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('read 5, valid 5, invalid 0');
    expect(await jobsOf(batch)).toHaveLength(5);
  });

  it('stops on a quote left open past 4 MiB with one sentence naming the line, and bounded memory', async () => {
    const result = await load(join(dir, 'open-quote.csv'), prefix, 'open-quote');
    expect(result.code).toBe(1);
    oneSentence(result.stderr);
    expect(result.stderr).toMatch(/cannot be read as CSV near line \d+: a record is longer than 4 MiB \(an unclosed quote\?\)/);
    expect(result.peakMb).toBeLessThan(300);
    expect(await jobsOf('open-quote')).toEqual([]);
  });

  it('stops on a header of more columns than a spreadsheet has with one sentence', async () => {
    const result = await load(join(dir, 'twenty-thousand-columns.csv'), prefix, 'too-wide');
    expect(result.code).toBe(1);
    oneSentence(result.stderr);
    const cells = (HEADER.length + 20_000).toLocaleString('en-US');
    expect(result.stderr).toContain(`its header line has ${cells} cells, more than the 16,384 cells a header may have.\n`);
    expect(await jobsOf('too-wide')).toEqual([]);
  });

  it.each(['deeply-nested.json', 'deeply-nested.jsonl'])(
    'refuses each record of %s nested 100,000 deep as one row, and loads the others, in bounded memory',
    async (name) => {
      const batch = name.replace(/\W/g, '-');
      const result = await load(join(dir, name), prefix, batch);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(3);
      expect(result.stdout).toContain('read 4, valid 2, invalid 2');
      expect(result.stdout).toContain('invalid (row): 2');
      expect(result.peakMb).toBeLessThan(300);
      expect(await jobsOf(batch)).toHaveLength(2);
      const rejects = readFileSync(join(tmpdir(), `${prefix}-${batch}.rejects`), 'utf8');
      const refused = (name.endsWith('.jsonl') ? rejects.trim().split('\n') : [rejects]).flatMap((t) => JSON.parse(t) as unknown);
      expect(refused).toEqual([
        { row: expect.any(Number), errors: '(row): nested deeper than 64 levels', invalidRecord: expect.stringMatching(/^\[{64}/) },
        { row: expect.any(Number), errors: '(row): nested deeper than 64 levels', invalidRecord: expect.stringMatching(/^(\{"a":){64}/) },
      ]);
    },
  );

  it('reads 16,000 columns with bounded memory, listing the unknown ones once (at most 100)', async () => {
    const result = await load(join(dir, 'sixteen-thousand-columns.csv'), prefix, 'wide');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('read 3, valid 3');
    expect(result.stdout).toMatch(/unknown columns \(ignored\): x0, x1, .*x99$/m);
    expect(result.peakMb).toBeLessThan(300);
  });

  it('refuses the broken line of a JSON Lines file as one row and loads the others', async () => {
    const result = await load(join(BAD, 'broken-line.jsonl'), prefix, 'jsonl');
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('read 3, valid 2, invalid 1');
    expect(result.stdout).toContain('invalid (row): 1');
    expect(await jobsOf('jsonl')).toHaveLength(2);
  });

  it('stops before anything when the profile is wrong, naming each problem', async () => {
    const result = await load(join(dir, 'records.json'), prefix, 'profile', join(BAD, 'wrong-profile.json'));
    expect(result.code).toBe(1);
    oneSentence(result.stderr);
    for (const path of ['organization.kpp', 'organization.regDate', 'representative.person.snils']) expect(result.stderr).toContain(path);
    expect(await jobsOf('profile')).toEqual([]);
  });

  it('has every file of the corpus under test', async () => {
    expect((await readdir(BAD)).filter((f) => f !== 'README.md').sort()).toEqual(
      [
        'broken-line.jsonl',
        'empty.csv',
        'garbage.csv',
        'header-only.csv',
        'not-an-array.json',
        'truncated-utf8.csv',
        'unbalanced-quotes.csv',
        'wrong-delimiter.csv',
        'wrong-profile.json',
      ].sort(),
    );
  });
});
