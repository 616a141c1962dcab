/**
 * The issue that moved the ledger into a database, reproduced as a bank would meet it: Redis
 * emptied (FLUSHALL) after a run and in the middle of one. What was filed is in the database;
 * Redis held only work. Nothing may be filed twice, and running the file again gives every
 * submitted deal its docflow back on its row. A private redis-server: FLUSHALL empties all of it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { generateDeals } from '../../chaos/generate-deals.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { ledgerRows } from '../../helpers/ledger-rows.js';
import { startPrivateRedis, type PrivateRedis } from '../../helpers/private-redis.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { waitFor } from '../../helpers/wait-for.js';

const ROWS = 40;
const SUBMITTED = new Set(['queued', 'suspended', 'already_submitted']);
type Line = Record<string, string>;

function runCommand(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; exit: Promise<{ code: number | null; err: string }> } {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  // 'close': the last of stderr may still be in the pipe at 'exit' (test/helpers/cli.ts).
  return { child, exit: new Promise((resolve) => child.once('close', (code) => resolve({ code, err }))) };
}

// Everything but the Redis server, which is the file's own (it is emptied): the folder once for the
// file; a sandbox and database of each test's own. The gateway keeps every docflow across the two
// runs and never refuses a repeated requestId.
const it = harness({ per: 'file', each: ['sandbox', 'db'], label: 'flushall', sandbox: { sessions: ['s'], latencyMs: 40 } });

describe('Redis emptied: nothing filed twice, every row gets its docflow back', () => {
  let store: UsedDatabase;
  const deals = generateDeals(ROWS, 1000, 'F');
  let dir: string;
  let redisServer: PrivateRedis;
  let redis: Redis;
  let sandbox: RunningSandbox;
  const children: ChildProcess[] = [];

  it.beforeAll(async ({ dir: folder }) => {
    dir = folder;
    redisServer = await startPrivateRedis(dir);
    redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    await writeFile(join(dir, 'deals.csv'), csvText(deals.rows));
  });
  // Before the harness removes the folder the server kept its files in.
  afterAll(async () => {
    redis.disconnect();
    await redisServer.stop();
  });
  it.beforeEach(async ({ sandbox: started, db }) => {
    sandbox = started;
    store = db;
    await redis.flushall();
  });
  // Before the harness closes the test's sandbox.
  afterEach(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });

  const env = () => ({
    REDIS_URL: redisServer.url,
    DATABASE_URL: store.url,
    REALTY_API_URL: sandbox.url,
    REALTY_SESSION_ID: 's',
    REALTY_PREFIX: 'emptied',
    LOG_LEVEL: 'warn',
  });
  const run = (out: string, extra: string[] = []) => {
    const started = runCommand(
      [
        ...extra,
        'run',
        join(dir, 'deals.csv'),
        '--profile',
        'samples/bank-profile.json',
        '--out',
        join(dir, out),
        '--concurrency',
        '4',
        '--timeout-ms',
        '2000',
        '--feed-lag-ms',
        '500',
        '--backoff-ms',
        '50',
      ],
      env(),
    );
    children.push(started.child);
    return started;
  };
  const results = (out: string): Line[] => parse(readFileSync(join(dir, out)), { columns: true, bom: true }) as Line[];
  /** Every docflow the gateway made, per requestId: one each, whatever happened to Redis. */
  const docflowsPerRequest = (): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const d of sandbox.docflows()) counts.set(d.requestId ?? '', (counts.get(d.requestId ?? '') ?? 0) + 1);
    return counts;
  };

  it('after a run: the same file run again files nothing and gives each row the docflow it made', async () => {
    const first = await run('first.csv').exit;
    expect(first.code, first.err).toBe(0);
    const before = results('first.csv');
    expect(before.filter((l) => SUBMITTED.has(l.outcome!))).toHaveLength(ROWS);
    const made = sandbox.stats().docflowsCreated;
    expect(made).toBe(ROWS);

    await redis.flushall();

    const second = await run('second.csv').exit;
    expect(second.code, second.err).toBe(0);
    const after = results('second.csv');
    expect(sandbox.stats().docflowsCreated).toBe(made);
    expect(sandbox.stats().requestIdsWithSeveralDocflows).toBe(0);
    // Row by row: the docflow it made before, from the ledger in the database.
    expect(after.map((l) => [l.dealId, l.docflowId])).toEqual(before.map((l) => [l.dealId, l.docflowId]));
    expect(after.every((l) => SUBMITTED.has(l.outcome!))).toBe(true);
  });

  it('in the middle of a run: running the file again finishes every deal, each with one docflow', async () => {
    const first = run('first.csv');
    // A third of the deals made, the rest waiting or in flight: Redis is emptied under the run.
    await waitFor(async () => sandbox.stats().docflowsCreated >= ROWS / 3, {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: 'a third of the docflows',
    });
    await redis.flushall();
    // The run notices its jobs are gone and stops (or finishes what it held): either way it ends.
    await first.exit;

    const second = await run('second.csv').exit;
    const after = results('second.csv');
    expect(
      after.filter((l) => SUBMITTED.has(l.outcome!)).map((l) => l.dealId),
      second.err,
    ).toHaveLength(ROWS);
    const counts = docflowsPerRequest();
    expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
    expect(sandbox.stats().docflowsCreated).toBe(ROWS);
    // The ledger names each deal's one docflow, the one its row reports.
    const ledger = new Map((await ledgerRows(store.db)).map((r) => [r.deal_id, r.docflow_id]));
    for (const line of after) expect(ledger.get(line.dealId!), line.dealId).toBe(line.docflowId);
  });

  it('in the middle of a run: `status` names the rows whose jobs went with Redis, and the command it gives remakes them', async () => {
    const first = run('first.csv', []);
    await waitFor(async () => sandbox.stats().docflowsCreated >= ROWS / 3, {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: 'a third of the docflows',
    });
    await redis.flushall();
    await first.exit;
    const made = sandbox.stats().docflowsCreated;
    const batch = (await store.db.kysely.selectFrom('batches').select('id').executeTakeFirstOrThrow()).id;
    // The rows that had their outcome before the FLUSHALL keep it: the database holds them.
    const kept = await store.db.kysely.selectFrom('outcomes').select('row').where('batch', '=', batch).execute();
    expect(kept.length).toBeGreaterThan(0);

    const status = await runCli(['status', batch], env());
    const command = /realty-batch (retry \S+ --missing --profile \S+)/.exec(status.stdout)?.[1];
    expect(command, status.stdout + status.stderr).toBeDefined();
    expect(command).toContain(`--profile ${join(ROOT, 'samples/bank-profile.json')}`);
    const missing = Number(/(\d+) rows? of batch/.exec(status.stdout)?.[1]);
    expect(missing).toBe(ROWS - kept.length);

    const retried = await runCli(command!.split(' '), env());
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain(`${missing} missing`);
    // A worker finishes them; the batch is done when every row has its outcome.
    const work = runCommand(['work', '--concurrency', '4', '--timeout-ms', '2000', '--feed-lag-ms', '500'], env());
    children.push(work.child);
    await waitFor(
      async () => (await store.db.kysely.selectFrom('outcomes').select('row').where('batch', '=', batch).execute()).length === ROWS,
      { timeoutMs: 120_000, intervalMs: 200, what: 'every row of the batch with its outcome' },
    );
    work.child.kill('SIGTERM');
    await work.exit;

    const results = await runCli(['results', batch, '--out', join(dir, 'after.csv')], env());
    expect(results.code, results.stderr).toBe(0);
    const after = parse(readFileSync(join(dir, 'after.csv')), { columns: true, bom: true }) as Line[];
    expect(after).toHaveLength(ROWS);
    expect(after.filter((l) => SUBMITTED.has(l.outcome!))).toHaveLength(ROWS);
    expect([...docflowsPerRequest().values()].filter((n) => n > 1)).toEqual([]);
    expect(sandbox.stats().docflowsCreated).toBe(ROWS);
    expect(made).toBeLessThanOrEqual(ROWS);
  });
});
