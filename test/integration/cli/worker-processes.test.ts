import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, afterEach } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { harness, type Harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait-for.js';
import { storedOutcomes } from '../../helpers/outcomes.js';

/** Three valid sample deals that carry their cadastral numbers (samples/README.md rows 2, 6, 10). */
const WITH_NUMBER = ['MSK-2026-004511', 'SPB-2026-010078', 'EKB-2026-000312'].map((id) => ROWS.find((r) => r[0] === id)!);

// A prefix, folder and database for each test; its sandbox each test starts, with options of its own.
const it = harness({ label: 'procs' });

describe('separate worker processes', () => {
  let store: Harness['db'];
  let sandbox: RunningSandbox;
  let dir: string;
  let prefix: string;
  const workers: ChildProcess[] = [];
  const env = (session: string) => ({
    REDIS_URL,
    REALTY_API_URL: sandbox.url,
    REALTY_SESSION_ID: session,
    REALTY_PREFIX: prefix,
    DATABASE_URL: store.url,
    LOG_LEVEL: 'silent',
  });
  const startWorker = (session: string, extra: string[] = []) => {
    const child = spawn(
      process.execPath,
      [CLI, 'work', '--concurrency', '4', '--attempts', '3', '--backoff-ms', '100', '--lock-ms', '1500', ...extra],
      {
        cwd: ROOT,
        env: childEnv(env(session)),
        stdio: 'ignore',
      },
    );
    workers.push(child);
    return child;
  };
  const outcomes = (batch: string): Promise<Array<{ outcome: string; docflowId?: string }>> => storedOutcomes(store.db, batch);
  const POLL = { timeoutMs: 30_000, intervalMs: 50 };

  it.beforeEach(async ({ prefix: testPrefix, dir: testDir, db }) => {
    prefix = testPrefix;
    dir = testDir;
    store = db;
    await writeFile(join(dir, 'deals.csv'), csvText(WITH_NUMBER));
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterEach(() => {
    for (const w of workers.splice(0)) if (w.exitCode === null) w.kill('SIGKILL');
  });

  it("takes over a killed worker's jobs and still makes one docflow per deal", async ({ openSandbox }) => {
    sandbox = await openSandbox({ sessions: ['s'], latencyMs: 1500 });
    const loaded = await runCli(
      ['load', join(dir, 'deals.csv'), '--profile', 'samples/bank-profile.json', '--batch', 'killed', '--rejects', join(dir, 'r.csv')],
      env('s'),
    );
    expect(loaded.code).toBe(0);
    const doomed = startWorker('s');
    // Killed while its gateway calls are in flight (each takes 1.5 s; the worker needs about 0.4 s to start).
    await new Promise((r) => setTimeout(r, 1000));
    expect(await outcomes('killed')).toHaveLength(0);
    doomed.kill('SIGKILL');
    startWorker('s');
    await waitFor(async () => (await outcomes('killed')).length === WITH_NUMBER.length, { ...POLL, what: 'every outcome' });
    const done = await outcomes('killed');
    expect(done.every((o) => o.outcome === 'queued')).toBe(true);
    expect(sandbox.stats().docflowsCreated).toBe(WITH_NUMBER.length);
    expect(new Set(done.map((o) => o.docflowId))).toEqual(new Set(sandbox.docflows().map((d) => d.docflowId)));
  });

  it('resumes a queue paused by a 401 when a worker starts with a valid session', async ({ openSandbox }) => {
    sandbox = await openSandbox({ sessions: ['valid'] });
    const refused = await runCli(
      [
        'run',
        join(dir, 'deals.csv'),
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'paused',
        '--out',
        join(dir, 'out.csv'),
        '--rejects',
        join(dir, 'r.csv'),
      ],
      env('expired'),
    );
    expect(refused.code).toBe(1);
    expect(await outcomes('paused')).toHaveLength(0);
    startWorker('valid');
    await waitFor(async () => (await outcomes('paused')).length === WITH_NUMBER.length, {
      ...POLL,
      what: 'every outcome after the restart',
    });
    expect((await outcomes('paused')).every((o) => o.outcome === 'queued')).toBe(true);
  });

  it('stops on SIGTERM after its active jobs finish, and exits 0', async ({ openSandbox, redis, keys }) => {
    sandbox = await openSandbox({ sessions: ['s'], latencyMs: 400 });
    await runCli(
      ['load', join(dir, 'deals.csv'), '--profile', 'samples/bank-profile.json', '--batch', 'graceful', '--rejects', join(dir, 'r.csv')],
      env('s'),
    );
    const worker = startWorker('s');
    const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    // SIGTERM once it has jobs in hand (each call takes 400 ms).
    await waitFor(async () => (await redis.llen(`${keys.bullPrefix}:${keys.queueName}:active`)) > 0, { ...POLL, what: 'an active job' });
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    // Whatever was active when the signal came was finished, not abandoned half-way.
    const done = await outcomes('graceful');
    expect(sandbox.stats().docflowsCreated).toBe(done.length);
  });
});
