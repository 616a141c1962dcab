/**
 * The morning report (issue 24, point 6), with the built CLI, the real sandbox (short lives)
 * and Redis: `schedule add --report-cron` registers a second job scheduler beside the tick's,
 * `schedule list` shows it, adding again without the flag removes it and `schedule remove`
 * removes both; a `work` process with a report cron every second writes report-<date>.json
 * and .csv whole into the outbox and POSTs them to --notify-url: the recent batches and the
 * older ones not registered yet, by outcome and by state, and nobody's name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect } from 'vitest';
import type { Keys } from '../../../src/redis/keys.js';
import type { MorningReport } from '../../../src/schedule/morning-report.js';
import { scheduleQueue } from '../../../src/schedule/scheduler.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

const REPORT_FILE = /^report-\d{4}-\d{2}-\d{2}\.(json|csv)$/;
const DAY_MS = 24 * 3600 * 1000;

// Seeded: the same lives every run, among them a payment, a registry error and completions.
const it = harness({
  per: 'file',
  label: 'report',
  sandbox: { sessions: ['s'], lifecycleMs: 150, payment: 0.3, faultRegistry: 0.2, seed: 7 },
});

// Its tests run schedule commands as child processes one after another: room for a busy host.
describe('the morning report', { timeout: 90_000 }, () => {
  let keys: Keys;
  let store: UsedDatabase;
  let redis: Redis;
  let dir: string;
  let inbox: string;
  let outbox: string;
  let env: Record<string, string>;
  let hook: Server;
  let hookUrl: string;
  const posted: Array<Record<string, unknown>> = [];
  const children: ChildProcess[] = [];
  const poll = (what: string) => ({ timeoutMs: 60_000, intervalMs: 200, what });

  const schedulers = async (): Promise<string[]> => {
    const queue = scheduleQueue(redis, keys);
    try {
      return (await queue.getJobSchedulers(0, -1, true)).map((s) => `${s.key} ${s.name} ${s.pattern ?? ''}`).sort();
    } finally {
      await queue.close();
    }
  };
  const add = (...extra: string[]) =>
    runCli(
      [
        'schedule',
        'add',
        '--inbox',
        inbox,
        '--outbox',
        outbox,
        '--profile',
        'samples/bank-profile.json',
        '--name',
        'morning',
        '--tz',
        'Europe/Moscow',
        ...extra,
      ],
      env,
    );
  const status = async (batch: string) =>
    JSON.parse((await runCli(['status', batch, '--json'], env)).stdout) as {
      done: boolean;
      registered: boolean;
      states: Record<string, number>;
    };
  const runBatch = (file: string, batch: string) =>
    runCli(['run', file, '--profile', 'samples/bank-profile.json', '--batch', batch, '--out', join(dir, `${batch}.csv`)], env, 120_000);

  it.beforeAll(async ({ keys: made, db, redis: client, dir: folder, env: given }) => {
    keys = made;
    store = db;
    redis = client;
    dir = folder;
    inbox = join(dir, 'inbox');
    outbox = join(dir, 'outbox');
    await mkdir(inbox);
    await mkdir(outbox);
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        posted.push(JSON.parse(body) as Record<string, unknown>);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/hook`;
    env = { ...given, LANG: 'C.UTF-8' };
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await new Promise<void>((resolve) => hook.close(() => resolve()));
  });

  it('adds, lists, drops and removes the report scheduler with its schedule', async () => {
    // A bad report cron is refused by its own flag's name, and registers nothing.
    const bad = await add('--cron', '0 3 * * *', '--report-cron', '0 7 * *');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--report-cron "0 7 * *" needs 5 fields');
    expect(await schedulers()).toEqual([]);

    const added = await add('--cron', '0 3 * * *', '--report-cron', '0 7 * * *');
    expect(added.code, added.stderr).toBe(0);
    // 07:00 in Moscow is 04:00 UTC.
    expect(added.stdout).toMatch(/morning report: "0 7 \* \* \*", next \d{4}-\d{2}-\d{2}T04:00:00\.000Z, to /);
    expect(await schedulers()).toEqual(['morning tick 0 3 * * *', 'morning:report report 0 7 * * *']);

    const list = await runCli(['schedule', 'list'], env);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^morning {2}"0 3 \* \* \*" Europe\/Moscow {2}next .* {2}report "0 7 \* \* \*" next \d{4}-\d{2}-\d{2}T04:00:00\.000Z$/,
    );

    // Added again without --report-cron: the schedule stays, its report goes.
    const again = await add('--cron', '0 3 * * *');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('morning report');
    expect(await schedulers()).toEqual(['morning tick 0 3 * * *']);
    expect((await runCli(['schedule', 'list'], env)).stdout).not.toContain('  report "');

    // With it again, then removed: both schedulers go.
    expect((await add('--cron', '0 3 * * *', '--report-cron', '0 7 * * *')).code).toBe(0);
    expect(await schedulers()).toHaveLength(2);
    const removed = await runCli(['schedule', 'remove', 'morning'], env);
    expect(removed.stdout).toContain('schedule morning removed');
    expect(await schedulers()).toEqual([]);
    expect((await runCli(['schedule', 'list'], env)).stdout.trim()).toBe('no schedules');
  });

  it('reports the recent batches and the unregistered older ones, whole, to the outbox and the webhook, with no personal data', async () => {
    // A batch followed while it runs, then by `track`: it settles with deals waiting for signatures (never registered here).
    expect((await runBatch('samples/deals.csv', 'deals')).code).toBe(3);
    const tracker = spawn(process.execPath, [CLI, 'track', '--poll-ms', '50'], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: 'ignore',
    });
    children.push(tracker);
    const settled = await waitFor(async () => {
      const s = await status('deals');
      return (s.states.queued ?? 0) + (s.states.sent ?? 0) + (s.states.unknown ?? 0) === 0 && s;
    }, poll('every docflow of the batch settled'));
    expect(settled.registered).toBe(false);
    // A batch of one row refused before sending: done with at once, registered.
    const bad = [...ROWS[0]!];
    bad[HEADER.indexOf('dealId')] = 'REPORT-BAD-1';
    bad[HEADER.indexOf('areaValue')] = 'много';
    await writeFile(join(dir, 'bad.csv'), csvText([bad]));
    await runBatch(join(dir, 'bad.csv'), 'bad');
    expect((await status('bad')).registered).toBe(true);

    // The report every second, run by a `work` process (the schedule queue's `report` jobs).
    expect((await add('--cron', '0 3 * * *', '--report-cron', '* * * * * *', '--notify-url', hookUrl)).code).toBe(0);
    const worker = spawn(process.execPath, [CLI, 'work'], { cwd: ROOT, env: childEnv(env), stdio: 'ignore' });
    children.push(worker);

    const reported = (want: (r: MorningReport) => boolean, what: string) =>
      waitFor(() => {
        const last = posted.at(-1) as (MorningReport & { kind: string }) | undefined;
        return last !== undefined && want(last) && last;
      }, poll(what));

    const first = await reported((r) => r.batches.length === 2, 'a report of both batches');
    expect(first.kind).toBe('report');
    expect(first.schedule).toBe('morning');
    const deals = first.batches.find((b) => b.batch === 'deals')!;
    expect(deals).toMatchObject({ file: 'deals.csv', rows: 24, done: true, registered: false });
    expect(deals.outcomes).toMatchObject({ suspended: 4, invalid: 3 });
    expect(deals.states.completed).toBeGreaterThan(0);
    expect(deals.states.error).toBeGreaterThan(0);
    expect(deals.waitingFor.signature).toBe(4);
    expect(deals.waitingFor.payment).toBeGreaterThan(0);
    expect(first.batches.find((b) => b.batch === 'bad')).toMatchObject({ rows: 1, done: true, registered: true, outcomes: { invalid: 1 } });
    expect(first.totals).toMatchObject({ batches: 2, registered: 1, signature: 4, error: deals.states.error });

    // A day and more later: the registered batch is done with, the one still waiting stays.
    const old = Date.now() - 2 * DAY_MS;
    await store.db.kysely.updateTable('batches').set({ created_ms: old }).where('id', 'in', ['deals', 'bad']).execute();
    const later = await reported((r) => r.batches.length === 1, 'a report without the old registered batch');
    expect(later.batches[0]).toMatchObject({ batch: 'deals', registered: false });
    expect(later.totals.batches).toBe(1);

    // The outbox: the two files of the day, whole, and nothing half-written beside them.
    const files = readdirSync(outbox);
    expect(files.filter((f) => !REPORT_FILE.test(f))).toEqual([]);
    const json = files.find((f) => f.endsWith('.json'))!;
    expect(files.sort()).toEqual([json, json.replace(/json$/, 'csv')].sort());
    const onDisk = JSON.parse(readFileSync(join(outbox, json), 'utf8')) as MorningReport;
    // Named for the day in the schedule's zone (Moscow, UTC+3 all year), not in UTC.
    const moscowDay = new Date(Date.parse(onDisk.at) + 3 * 3600 * 1000).toISOString().slice(0, 10);
    expect(json).toBe(`report-${moscowDay}.json`);
    expect(onDisk.batches.map((b) => b.batch)).toEqual(['deals']);
    const csv = parse(readFileSync(join(outbox, json.replace(/json$/, 'csv'))), { columns: true }) as Array<Record<string, string>>;
    expect(csv).toHaveLength(1);
    expect(csv[0]).toMatchObject({ batch: 'deals', file: 'deals.csv', rows: '24', done: 'yes', registered: 'no', waiting_signature: '4' });

    // Nobody's name, SNILS or passport: in the files or in what was posted.
    const personal = ['ownerSurname', 'ownerName', 'ownerPatronymic', 'ownerSnils', 'ownerDocNumber']
      .flatMap((field) => ROWS.map((r) => r[HEADER.indexOf(field)]!))
      .filter((v) => v.length > 3);
    expect(personal.length).toBeGreaterThan(20);
    const written = [
      readFileSync(join(outbox, json), 'utf8'),
      readFileSync(join(outbox, json.replace(/json$/, 'csv')), 'utf8'),
      JSON.stringify(posted),
    ];
    for (const text of written) for (const value of personal) expect(text).not.toContain(value);
  }, 240_000);
});
