/**
 * A crafted file dropped into an inbox that two `realty-batch work` processes serve: the
 * red team's line of 188 million commas aborted the process (exit 133) and, restarted,
 * `work` took the same file and aborted again (3 of 3), its in-flight deals each time. Now
 * the line is one refused row, a file the loader refuses is set aside with its reason, a
 * file whose loads stopped the process twice is set aside before a third, both workers stay
 * up, and a good file dropped after them runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect } from 'vitest';
import type { Keys } from '../../../src/redis/keys.js';
import { inboxKey, type FileSummary } from '../../../src/schedule/run-tick.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';

/** Rows 1 and 2 of the samples (both valid, both made) under deal ids of their own. */
const rows = (tag: string): string[][] => {
  const id = HEADER.indexOf('dealId');
  return ROWS.slice(0, 2).map((r) => [`${tag}-${r[id]}`, ...r.slice(1)]);
};
const lines = (tag: string): string[] => csvText(rows(tag)).trimEnd().split('\n');

// No database of the file's own: the commands use their default place, as they did.
const it = harness({ per: 'file', label: 'crafted', engine: 'none', logLevel: 'info' });

describe('a crafted file in an inbox served by two workers', { timeout: 120_000 }, () => {
  let keys: Keys;
  let redis: Redis;
  let dir: string;
  let inbox: string;
  let outbox: string;
  const workers: ChildProcess[] = [];
  const POLL = { timeoutMs: 90_000, intervalMs: 200 };

  const summaryOf = (name: string): FileSummary | undefined => {
    const file = join(outbox, `${name}.summary.json`);
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as FileSummary) : undefined;
  };
  /** Drops a file and its ready marker, and waits for its summary. */
  const drop = async (name: string, content: string | Buffer): Promise<FileSummary> => {
    await writeFile(join(inbox, name), content);
    await writeFile(join(inbox, `${name}.ready`), '');
    // A worker that dies (exit 133, as the commas file made it) ends the wait at once.
    await waitFor(() => summaryOf(name) ?? workers.find((w) => w.exitCode !== null || w.signalCode !== null), {
      ...POLL,
      what: `the summary of ${name}`,
    });
    bothUp();
    return summaryOf(name)!;
  };
  const bothUp = (): void => {
    for (const w of workers)
      expect({ pid: w.pid, exitCode: w.exitCode, signal: w.signalCode }).toEqual({ pid: w.pid, exitCode: null, signal: null });
  };

  it.beforeAll(async ({ redis: client, keys: made, dir: folder, env }) => {
    redis = client;
    keys = made;
    dir = folder;
    inbox = join(dir, 'in');
    outbox = join(dir, 'out');
    await mkdir(inbox);
    await mkdir(outbox);
    const added = await runCli(
      [
        ...['schedule', 'add', '--inbox', inbox, '--outbox', outbox, '--profile', 'samples/bank-profile.json'],
        ...['--cron', '*/2 * * * * *', '--ready-suffix', '.ready', '--name', 'crafted'],
      ],
      env,
    );
    expect(added.code).toBe(0);
    for (let i = 0; i < 2; i++) {
      workers.push(
        spawn(process.execPath, [CLI, 'work', '--attempts', '2', '--backoff-ms', '50'], {
          cwd: ROOT,
          env: childEnv(env),
          stdio: 'ignore',
        }),
      );
    }
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(() => {
    for (const w of workers) w.kill('SIGKILL');
  });

  it('reads the line of 188 million commas as one refused row and runs the rows around it, both workers up', async () => {
    const [header, first, second] = lines('C');
    const commas = Buffer.concat([Buffer.from(`${header}\n${first}\n`), Buffer.alloc(188_000_000, ','), Buffer.from(`\n${second}\n`)]);
    const summary = await drop('commas.csv', commas);
    expect(summary).toMatchObject({ status: 'done', rows: 3, exitStatus: 3, outcomes: { invalid: 1, queued: 2 } });
    expect(readFileSync(join(outbox, 'commas.csv.rejects.csv'), 'utf8')).toContain(
      'is 188,000,000 bytes long and has 188,000,001 cells, more than the 4 MiB and 16,384 cells a row may have',
    );
    bothUp();
  });

  it('sets a file the loader refuses aside with its reason, both workers up', async () => {
    const [header, first, second] = lines('Q');
    const summary = await drop('open-quote.csv', `${header}\n${first}\n"${`${'y'.repeat(100)}\n`.repeat(50_000)}${second}\n`);
    expect(summary).toMatchObject({ status: 'failed', exitStatus: 1 });
    expect(summary.error).toMatch(
      /open-quote\.csv cannot be read as CSV near line \d+: a record is longer than 4 MiB \(an unclosed quote\?\)/,
    );
    await waitFor(() => existsSync(join(inbox, '.realty', 'failed', 'open-quote.csv')), { ...POLL, what: 'the file set aside' });
    bothUp();
  });

  it('sets aside, before a third load, a file whose loads stopped the process twice', async () => {
    const content = `${lines('K').join('\n')}\n`;
    // Two loads of this content began and never ended: the process died in them (as the commas file made it do).
    const sha = createHash('sha256').update(content).digest('hex');
    await redis.hset(inboxKey(keys, inbox, 'loading'), sha, 2);
    const summary = await drop('crashing.csv', content);
    expect(summary).toMatchObject({ status: 'failed', exitStatus: 1 });
    expect(summary.error).toBe(
      'crashing.csv was set aside: loading it stopped the process 2 times before the load ended (a crash or a kill while it was read); check the file, and drop it in again to load it once more.',
    );
    expect(summary.batch).toBeUndefined();
    await waitFor(() => existsSync(join(inbox, '.realty', 'failed', 'crashing.csv')), { ...POLL, what: 'the file set aside' });
    // Dropped in again, it loads once more (the count starts over).
    expect(await redis.hexists(inboxKey(keys, inbox, 'loading'), sha)).toBe(0);
    bothUp();
  });

  it('runs a good file dropped after them, both workers up', async () => {
    const summary = await drop('good.csv', `${lines('G').join('\n')}\n`);
    expect(summary).toMatchObject({ status: 'done', rows: 2, exitStatus: 0, outcomes: { queued: 2 } });
    expect(await redis.hlen(inboxKey(keys, inbox, 'loading'))).toBe(0);
    bothUp();
  });
});
