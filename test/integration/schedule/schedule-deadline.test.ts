import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, describe, expect } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { runTick } from '../../../src/schedule/run-tick.js';
import { listSchedules } from '../../../src/schedule/scheduler.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';

const readCsv = readCsvFile;

// One database for the file: the `work` process the second test starts runs until the end.
const it = harness({ per: 'file', label: 'sched-deadline', sandbox: { sessions: ['s'], egronRegions: ['Республика Крым'] } });

describe('schedule add --deadline: a nightly tick that must end before the morning', () => {
  let dir: string;
  let worker: ChildProcess | undefined;
  let env: Record<string, string>;

  it.beforeAll(({ dir: folder, env: given }) => {
    dir = folder;
    env = given;
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(() => {
    worker?.kill('SIGKILL');
  });

  it(
    'keeps a clock-time deadline with the schedule and its zone, and refuses a date in one sentence (exit 2)',
    { timeout: 120_000 },
    async ({ redis, keys }) => {
      const inbox = join(dir, 'in-a');
      const outbox = join(dir, 'out-a');
      await mkdir(inbox);
      await mkdir(outbox);
      const add = (deadline: string) =>
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
            '--cron',
            '0 30 1 * * *',
          ].concat(['--tz', 'Europe/Moscow', '--name', 'night', '--deadline', deadline]),
          env,
        );
      const refused = await add('2026-11-25T06:00');
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toContain('--deadline "2026-11-25T06:00" is a date, and a schedule runs every night');
      expect((await add('06:00')).code).toBe(0);
      const [night] = await listSchedules(redis, keys);
      expect(night?.data).toMatchObject({ deadline: { at: [6, 0, 0] }, tz: 'Europe/Moscow' });
    },
  );

  it(
    'stops waiting for a 501 row at the deadline: results and attention with it pending, the file kept for the next tick, exit 3',
    { timeout: 90_000 },
    async ({ redis, keys, db: store }) => {
      worker = spawn(process.execPath, [CLI, 'work', '--attempts', '8', '--backoff-ms', '600000'], {
        cwd: ROOT,
        env: childEnv(env),
        stdio: 'ignore',
      });
      const inbox = join(dir, 'in-b');
      const outbox = join(dir, 'out-b');
      await mkdir(inbox);
      await mkdir(outbox);
      const file = join(inbox, 'bank.csv');
      await copyFile(join(ROOT, 'samples/deals.csv'), file);
      const past = new Date(Date.now() - 120_000);
      await utimes(file, past, past);
      const queue = new Queue(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
      try {
        // The deadline is 20 s after the tick begins (time for the other rows on a busy host), and the
        // worker is listening first: its start (Node, opening and migrating the database) takes seconds.
        await waitFor(async () => (await queue.getWorkersCount()) > 0, {
          timeoutMs: 30_000,
          intervalMs: 100,
          what: 'the worker listening',
        });
        const result = await runTick(
          { name: 'b', inbox, outbox, profile: join(ROOT, 'samples/bank-profile.json'), deadline: { afterMs: 20_000 } },
          { redis, keys, db: store.db, logger: createLogger({ level: 'silent' }), pollMs: 50 },
        );
        expect(result.files).toHaveLength(1);
        expect(result.files[0]).toMatchObject({ file: 'bank.csv', status: 'stopped', exitStatus: 3, rows: 24 });
        expect(result.files[0]!.outcomes).toMatchObject({ pending: 1, queued: 13, suspended: 4 });
        expect(result.files[0]!.error).toContain("the schedule's --deadline came");
        const results = readCsv(join(outbox, 'bank.csv.results.csv'));
        const crimea = results.find((r) => r.row === '24')!;
        expect(crimea.outcome).toBe('pending');
        expect(crimea.errorMessage).toMatch(/^waiting: try 1 failed: 501.*; next try /);
        const attention = readCsv(join(outbox, 'bank.csv.attention.csv'));
        expect(attention.find((r) => r.row === '24')).toMatchObject({ outcome: 'pending' });
        expect(attention.find((r) => r.row === '24')!.hint).toContain('its job stays in the queue');
        // Left in the inbox: the next tick resumes the same batch and writes its results again.
        expect(existsSync(file)).toBe(true);
        // A tick that kept its deadline went as planned: /metrics' last tick is no failure to page about.
        expect(await redis.hget(keys.scheduleTick('b'), 'success')).toBe('1');
      } finally {
        await queue.close();
      }
    },
  );
});
