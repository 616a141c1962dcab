import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, afterAll } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { inboxKey, runTick, type FileSummary } from '../../../src/schedule/run-tick.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { OWN_COLUMN_HEADERS_RU } from '../../../src/input/own-columns.js';
import { OUTCOME_NAMES_RU } from '../../../src/results/russian.js';
import { waitFor } from '../../helpers/wait-for.js';

/** The samples under new deal ids, so that each file's deals are its own. */
const deals = (tag: string): string => {
  const id = HEADER.indexOf('dealId');
  return csvText(ROWS.map((r) => [`${tag}-${r[id]}`, ...r.slice(1)]));
};
const summaryOf = (outbox: string, name: string): FileSummary | undefined => {
  const file = join(outbox, `${name}.summary.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as FileSummary) : undefined;
};

// One database for the file: the `work` process, started once, and the ticks run here share its ledger.
const it = harness({ per: 'file', label: 'schedule', sandbox: { sessions: ['s'], egronRegions: ['Республика Крым'] }, logLevel: 'info' });

describe('nightly runs from an inbox, with a cron every two seconds', () => {
  let sandbox: RunningSandbox;
  let dir: string;
  let inbox: string;
  let outbox: string;
  let worker: ChildProcess;
  let hook: Server;
  const posted: unknown[] = [];
  let env: Record<string, string>;

  const POLL = { timeoutMs: 40_000, intervalMs: 100 };

  it.beforeAll(async ({ sandbox: started, dir: folder, env: given }) => {
    sandbox = started;
    dir = folder;
    inbox = join(dir, 'inbox');
    outbox = join(dir, 'outbox');
    await mkdir(inbox);
    await mkdir(outbox);
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        posted.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const port = (hook.address() as { port: number }).port;
    env = given;
    const first = await runCli(
      [
        'schedule',
        '--inbox',
        inbox,
        '--outbox',
        outbox,
        '--profile',
        'samples/bank-profile.json',
        '--cron',
        '0 3 * * *',
        '--tz',
        'Europe/Moscow',
        '--name',
        'nightly',
      ],
      env,
    );
    expect(first.code).toBe(0);
    // Calling it again updates the same schedule: every two seconds now, with a webhook.
    const again = await runCli(
      [
        'schedule',
        '--inbox',
        inbox,
        '--outbox',
        outbox,
        '--profile',
        'samples/bank-profile.json',
        '--cron',
        '*/2 * * * * *',
        '--settle-ms',
        '1500',
        '--name',
        'nightly',
        '--notify-url',
        `http://127.0.0.1:${port}/hook`,
        '--lang',
        'ru',
      ],
      env,
    );
    expect(again.code).toBe(0);
    worker = spawn(process.execPath, [CLI, 'work', '--attempts', '2', '--backoff-ms', '50'], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await new Promise<void>((resolve) => hook.close(() => resolve()));
  });

  it('lists one schedule, updated rather than duplicated', async () => {
    const list = await runCli(['schedule', '--list'], env);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('nightly  "*/2 * * * * *"');
    expect(lines[0]).toContain(`${inbox} → ${outbox}`);
  });

  it('runs two dropped files as two batches, with results, attention and summary in the outbox', async () => {
    await writeFile(join(inbox, 'bank-a.csv'), deals('A'));
    await writeFile(join(inbox, 'bank-b.csv'), deals('B'));
    await waitFor(() => summaryOf(outbox, 'bank-a.csv') !== undefined && summaryOf(outbox, 'bank-b.csv') !== undefined, {
      ...POLL,
      what: 'both summaries',
    });
    for (const name of ['bank-a.csv', 'bank-b.csv']) {
      const summary = summaryOf(outbox, name)!;
      expect(summary).toMatchObject({
        status: 'done',
        rows: 24,
        exitStatus: 3,
        outcomes: { queued: 13, suspended: 4, invalid: 3, ambiguous: 2, not_found: 1, unavailable: 1 },
      });
      expect(parse(readFileSync(join(outbox, `${name}.results.csv`)), { columns: true })).toHaveLength(24);
      // In the form Russian Excel opens: a BOM, ';' and CRLF.
      const attention = parse(readFileSync(join(outbox, `${name}.attention.csv`)), { columns: true, bom: true, delimiter: ';' }) as Array<
        Record<string, string>
      >;
      // The 7 rows refused, and the 4 docflows that wait for the applicants' signatures (201 at creation).
      expect(attention).toHaveLength(11);
      const { row, outcome, hint, errors } = OWN_COLUMN_HEADERS_RU;
      expect(attention.filter((r) => r[outcome] === OUTCOME_NAMES_RU.suspended)).toHaveLength(4);
      // row, outcome, hint and errors first, named and written in Russian, as the schedule was added with --lang ru.
      expect(Object.keys(attention[0]!).slice(0, 5)).toEqual([row, outcome, hint, errors, 'dealId']);
      for (const r of attention) expect(r[hint]).toMatch(/[а-яё]{3}/);
      expect(existsSync(join(inbox, '.realty', 'processed', name))).toBe(true);
    }
    expect(summaryOf(outbox, 'bank-a.csv')!.batch).not.toBe(summaryOf(outbox, 'bank-b.csv')!.batch);
    await waitFor(() => posted.length >= 2, { ...POLL, what: 'the webhook' });
    expect(posted).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: 'bank-a.csv', status: 'done' }),
        expect.objectContaining({ file: 'bank-b.csv', status: 'done' }),
      ]),
    );
  });

  it('does not run the same content again under another name, and says so', async () => {
    const created = sandbox.stats().docflowsCreated;
    await writeFile(join(inbox, 'bank-a-again.csv'), deals('A'));
    await waitFor(() => summaryOf(outbox, 'bank-a-again.csv') !== undefined, { ...POLL, what: 'the duplicate summary' });
    expect(summaryOf(outbox, 'bank-a-again.csv')).toMatchObject({ status: 'duplicate', earlier: { file: 'bank-a.csv' } });
    expect(existsSync(join(outbox, 'bank-a-again.csv.results.csv'))).toBe(false);
    // The summary is published first, then the input moves (a tick that dies between runs it again).
    await waitFor(() => existsSync(join(inbox, '.realty', 'processed', 'bank-a-again.csv')), {
      ...POLL,
      what: 'the duplicate moved to processed',
    });
    expect(sandbox.stats().docflowsCreated).toBe(created);
  });

  it('lets a file that is still being written wait for a tick where it stays the same', async () => {
    const lines = deals('C').split('\n');
    const file = join(inbox, 'bank-c.csv');
    await writeFile(file, `${lines[0]}\n`);
    // Written three lines every 700 ms, over several ticks.
    const body = lines.slice(1).filter(Boolean);
    for (let i = 0; i < body.length; i += 3) {
      await appendFile(file, `${body.slice(i, i + 3).join('\n')}\n`);
      expect(summaryOf(outbox, 'bank-c.csv')).toBeUndefined();
      await new Promise((r) => setTimeout(r, 700));
    }
    await waitFor(() => summaryOf(outbox, 'bank-c.csv') !== undefined, { ...POLL, what: 'the grown file' });
    expect(summaryOf(outbox, 'bank-c.csv')).toMatchObject({ status: 'done', rows: 24 });
  });

  it('runs one tick at a time per schedule: a second one finds the lock and returns', async ({ redis, keys, db: store }) => {
    const empty = join(dir, 'empty-inbox');
    await mkdir(empty);
    await redis.set(inboxKey(keys, empty, 'lock'), 'someone-else', 'PX', 5000);
    const result = await runTick(
      { name: 'manual', inbox: empty, outbox, profile: join(ROOT, 'samples/bank-profile.json') },
      { redis, keys, db: store.db, logger: createLogger({ level: 'silent' }) },
    );
    expect(result.skipped).toBe('previous tick still running');
  });

  it('runs a file dropped long before a tick at that very tick, not a tick later', async ({ redis, keys, db: store }) => {
    const early = join(dir, 'early-inbox');
    await mkdir(early);
    const file = join(early, 'bank-d.csv');
    await writeFile(file, deals('D'));
    // Dropped two minutes ago: a nightly tick must not make it wait a day.
    const past = new Date(Date.now() - 120_000);
    await utimes(file, past, past);
    const result = await runTick(
      { name: 'early', inbox: early, outbox, profile: join(ROOT, 'samples/bank-profile.json') },
      { redis, keys, db: store.db, logger: createLogger({ level: 'silent' }), pollMs: 50 },
    );
    expect(result.waiting).toEqual([]);
    expect(result.files).toMatchObject([{ file: 'bank-d.csv', status: 'done', rows: 24 }]);
  });

  it('removes the schedule', async () => {
    expect((await runCli(['schedule', '--remove', '--name', 'nightly'], env)).stdout).toContain('schedule nightly removed');
    expect((await runCli(['schedule', '--list'], env)).stdout.trim()).toBe('no schedules');
    expect(await readdir(inbox)).toEqual(['.realty']);
  });
});
