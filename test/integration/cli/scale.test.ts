import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, afterEach } from 'vitest';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait-for.js';
import { readCsvFile, runOutcome } from '../../helpers/csv.js';

// The fleet's sandbox and prefix; the single run's prefix and sandbox opened in the test. No database of their own, as before.
const it = harness({ label: 'fleet', sandbox: { sessions: ['s'], latencyMs: 100, egronRegions: ['Республика Крым'] }, engine: 'none' });

describe('load, work, results and status as separate processes', () => {
  const workers: ChildProcess[] = [];

  // Before the harness closes the sandboxes and deletes the prefixes.
  afterEach(() => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  });

  it('give the outcomes of one run, with the work shared by more than one of three workers', async ({
    prefix,
    keys,
    redis,
    sandbox,
    openSandbox,
    openPrefix,
    dir,
  }) => {
    const single = openPrefix('single');
    /**
     * The single run's own gateway: the same bank's same deals filed by two deployments on one
     * gateway account are two docflows per requestId, which each deployment's follower rightly
     * reports as DUPLICATE_DOCFLOW once its feed shows the other's.
     */
    const alone = await openSandbox();
    const env = (p: string) => ({
      REDIS_URL,
      REALTY_API_URL: p === single ? alone.url : sandbox.url,
      REALTY_SESSION_ID: 's',
      REALTY_PREFIX: p,
      LOG_LEVEL: 'silent',
    });
    const flags = ['--attempts', '2', '--backoff-ms', '50'];
    const one = await runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'night',
        '--out',
        join(dir, 'one.csv'),
        '--rejects',
        join(dir, 'r1.csv'),
        ...flags,
      ],
      env(single),
    );
    expect(one.code).toBe(3);

    for (let i = 0; i < 3; i++) {
      workers.push(
        spawn(process.execPath, [CLI, 'work', '--concurrency', '3', ...flags], {
          cwd: ROOT,
          env: childEnv(env(prefix)),
          stdio: 'ignore',
        }),
      );
    }
    const loaded = await runCli(
      ['load', 'samples/deals.csv', '--profile', 'samples/bank-profile.json', '--batch', 'night', '--rejects', join(dir, 'r2.csv')],
      env(prefix),
    );
    expect(loaded.code).toBe(3);
    const done = async () => (JSON.parse((await runCli(['status', 'night', '--json'], env(prefix))).stdout) as { done: boolean }).done;
    await waitFor(done, { timeoutMs: 60_000, intervalMs: 200, what: 'the fleet to finish the batch' });
    expect((await runCli(['results', 'night', '--out', join(dir, 'fleet.csv')], env(prefix))).code).toBe(3);

    const comparable = (file: string) => readCsvFile(file).map(runOutcome);
    expect(comparable(join(dir, 'fleet.csv'))).toEqual(comparable(join(dir, 'one.csv')));

    const queue = new Queue(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
    try {
      const jobs = await queue.getJobs(['completed', 'failed'], 0, -1);
      const by = new Set(jobs.map((j) => j.processedBy).filter(Boolean));
      expect(jobs.length).toBe(21);
      expect(by.size).toBeGreaterThan(1);
    } finally {
      await queue.close();
    }
  });
});
