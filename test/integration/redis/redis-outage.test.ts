import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Redis } from 'ioredis';
import { describe, expect, afterAll } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';
import { startPrivateRedis, type PrivateRedis } from '../../helpers/private-redis.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { waitFor } from '../../helpers/wait-for.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { outcomeCount } from '../../helpers/outcomes.js';

const OUTAGE_MS = 30_000;

const databaseUrl = ({ target }: TestDatabase): string => (target.engine === 'sqlite' ? `sqlite:${target.path}` : target.url);

interface Proc {
  child: ChildProcess;
  exit: Promise<number | null>;
  out: () => string;
  err: () => string;
}

function start(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  // 'close': the last of the output may still be in the pipes at 'exit' (test/helpers/cli.ts).
  return { child, exit: new Promise((resolve) => child.once('close', resolve)), out: () => out, err: () => err };
}

// The folder and sandbox from the harness; the Redis server the outage stops is the file's own, and
// so are the two databases, one for each prefix.
const it = harness({
  per: 'file',
  label: 'outage',
  engine: 'none',
  sandbox: { sessions: ['s'], latencyMs: 300, egronRegions: ['Республика Крым'] },
});

describe('a 30-second Redis outage', () => {
  let dir: string;
  /** A private Redis that writes every command to its AOF before answering: what it acknowledged survives the kill. */
  let redisServer: PrivateRedis;
  let sandbox: RunningSandbox;
  const procs: Proc[] = [];
  /** The database of each prefix (its batches, their outcomes, its ledger). */
  const databases = new Map<string, TestDatabase>();

  it.beforeAll(async ({ dir: folder, sandbox: started }) => {
    dir = folder;
    sandbox = started;
    redisServer = await startPrivateRedis(dir);
    for (const prefix of ['a', 'b']) databases.set(prefix, await openTestDatabase('sqlite'));
  });
  // Before the harness closes the sandbox and removes the folder the server kept its files in.
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await redisServer?.stop();
    for (const d of databases.values()) await d.drop();
  });

  it('leaves run and work to finish every row after it, and load to stop with exit 1 and resume without duplicates', async () => {
    const url = redisServer.url;
    const env = (prefix: string) => ({
      REDIS_URL: url,
      REALTY_API_URL: sandbox.url,
      REALTY_SESSION_ID: 's',
      REALTY_PREFIX: prefix,
      DATABASE_URL: databaseUrl(databases.get(prefix)!),
      LOG_LEVEL: 'warn',
    });
    const redis = new Redis(url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    const rows = (prefix: string, batch: string) => outcomeCount(databases.get(prefix)!.db, batch);
    const jobs = async (prefix: string, batch: string) =>
      (await redis.keys(`{${prefix}}:deals:${batch}.*`)).filter((k) => !k.endsWith(':logs')).length;

    // work: a batch loaded beforehand; run: a batch of its own; load: 30,000 rows.
    const loaded = start(
      ['load', 'samples/deals.csv', '--profile', 'samples/bank-profile.json', '--batch', 'worked', '--rejects', join(dir, 'w.csv')],
      env('a'),
    );
    expect(await loaded.exit).toBe(3);
    const worker = start(['work', '--concurrency', '2', '--attempts', '3', '--backoff-ms', '50', '--lock-ms', '3000'], env('a'));
    const run = start(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'ran',
        '--out',
        join(dir, 'ran.csv'),
        '--rejects',
        join(dir, 'r.csv'),
        '--concurrency',
        '2',
        '--attempts',
        '3',
        '--backoff-ms',
        '50',
        '--lock-ms',
        '3000',
      ],
      env('a'),
    );
    const big = join(dir, 'big.csv');
    await writeFile(big, csvText(Array.from({ length: 30_000 }, (_, i) => [`BIG-${i}`, ...ROWS[i % ROWS.length]!.slice(1)])));
    const load = start(
      ['load', big, '--profile', 'samples/bank-profile.json', '--batch', 'big', '--rejects', join(dir, 'big.rejects.csv')],
      env('b'),
    );
    procs.push(worker, run, load);

    const progress = async () => (await rows('a', 'ran')) >= 3 && (await rows('a', 'worked')) >= 3 && (await jobs('b', 'big')) !== 0;
    await waitFor(progress, { timeoutMs: 30_000, intervalMs: 20, what: 'progress before the outage' });
    await redisServer.kill();
    const killedAt = Date.now();

    expect(await load.exit).toBe(1);
    expect(load.err()).toMatch(
      /^realty-batch: Redis stopped answering \(.*\); nothing is lost: run the same command again once Redis is back\.\n$/,
    );

    await new Promise((r) => setTimeout(r, OUTAGE_MS - (Date.now() - killedAt)));
    expect(worker.child.exitCode).toBeNull();
    expect(run.child.exitCode).toBeNull();
    await redisServer.restart();

    expect(await run.exit).toBe(3);
    const ran = parse(readFileSync(join(dir, 'ran.csv')), { columns: true }) as Array<Record<string, string>>;
    expect(ran).toHaveLength(24);
    expect(ran.filter((r) => r.outcome === 'pending')).toEqual([]);
    await waitFor(async () => (await rows('a', 'worked')) >= 24, {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'work to finish its batch after the outage',
    });
    expect(worker.child.exitCode).toBeNull();
    for (const text of [run.err(), worker.err()]) {
      expect(text).not.toContain('unexpected error');
      expect(text).not.toMatch(/\n\s+at /);
    }
    // Every docflow the sandbox made is one row's, once.
    const docflows = sandbox.docflows();
    expect(new Set(docflows.map((d) => d.requestId)).size).toBe(docflows.length);

    const again = start(
      ['load', big, '--profile', 'samples/bank-profile.json', '--batch', 'big', '--rejects', join(dir, 'big.rejects.csv'), '--json'],
      env('b'),
    );
    expect(await again.exit).toBe(3);
    const summary = JSON.parse(again.out()) as { valid: number; enqueued: number; alreadyEnqueued: number };
    expect(summary.alreadyEnqueued).toBeGreaterThan(0);
    expect(summary.enqueued + summary.alreadyEnqueued).toBe(summary.valid);
    expect(await jobs('b', 'big')).toBe(summary.valid);
    redis.disconnect();
  }, 180_000);
});
