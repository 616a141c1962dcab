import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { describe, expect, afterEach } from 'vitest';
import type { Keys } from '../../../src/redis/keys.js';
import type { RunningSandbox, SandboxOptions } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { keysOf, REDIS_URL } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait-for.js';
import { storedOutcomes } from '../../helpers/outcomes.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

const LOGIN = 'bank-robot';
const PASSWORD = 'Night-Pa55word-90f3e1';
const ACCOUNT = 'acc-7';
/** Sample rows that end queued or suspended (samples/README.md): rows 2, 6 and 10 for the first batch, the others for the second. */
const FIRST = ['MSK-2026-004511', 'SPB-2026-010078', 'EKB-2026-000312'];
const SECOND = [
  'NSK-2026-000123',
  'NSK-2026-000124',
  'SPB-2026-010077',
  'MSK-2026-004512',
  'EKB-2026-000311',
  'KZN-2026-000051',
  'KZN-2026-000052',
  'NSK-2026-000125',
  'MSK-2026-004513',
  'NSK-2026-000126',
  'MSK-2026-004514',
  'KZN-2026-000053',
  'EKB-2026-000314',
  'NSK-2026-000128',
];
const rowsOf = (ids: string[]) => ids.map((id) => ROWS.find((r) => r[0] === id)!);
const TTL_MS = 1500;

// Everything of each test's own; each test starts its sandbox, with its own users.
const it = harness({ label: 'login' });

describe('a fleet that logs in itself (REALTY_LOGIN, REALTY_PASSWORD, REALTY_ACCOUNT_ID)', { timeout: 90_000 }, () => {
  let store: UsedDatabase;
  let sandbox: RunningSandbox;
  let openSandbox: (options: SandboxOptions) => Promise<RunningSandbox>;
  let dir: string;
  let prefix: string;
  let keys: Keys;
  let redis: Redis;
  const workers: Array<{ child: ChildProcess; stderr: () => string }> = [];
  const env = (password = PASSWORD) => ({
    REDIS_URL,
    REALTY_API_URL: sandbox.url,
    REALTY_LOGIN: LOGIN,
    REALTY_PASSWORD: password,
    REALTY_ACCOUNT_ID: ACCOUNT,
    REALTY_PREFIX: prefix,
    DATABASE_URL: store.url,
    LOG_LEVEL: 'debug',
  });
  const startWorker = () => {
    // Each also follows the feed (one at a time, by the fleet's lock): a deal is claimed only while
    // the feed is known complete, so its reads share the fleet's session and meet its expiry too.
    const child = spawn(process.execPath, [CLI, 'work', '--concurrency', '4', '--attempts', '3', '--backoff-ms', '100'], {
      cwd: ROOT,
      env: childEnv(env()),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    workers.push({ child, stderr: () => stderr });
  };
  const outcomes = async (batch: string): Promise<string[]> => (await storedOutcomes(store.db, batch)).map((o) => o.outcome);
  const load = (batch: string) =>
    runCli(
      [
        'load',
        join(dir, `${batch}.csv`),
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        batch,
        '--rejects',
        join(dir, `${batch}-r.csv`),
      ],
      env(),
    );

  it.beforeEach(async ({ db, prefix: made, keys: madeKeys, redis: client, dir: folder, openSandbox: open }) => {
    store = db;
    prefix = made;
    keys = madeKeys;
    redis = client;
    dir = folder;
    openSandbox = open;
    await writeFile(join(dir, 'first.csv'), csvText(rowsOf(FIRST)));
    await writeFile(join(dir, 'second.csv'), csvText(rowsOf(SECOND)));
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterEach(() => {
    for (const w of workers.splice(0)) if (w.child.exitCode === null) w.child.kill('SIGKILL');
  });

  it('two worker processes log in once, and once again for the whole fleet when the session expires: every row queued or suspended, the queue never paused', async () => {
    sandbox = await openSandbox({ users: [`${LOGIN}:${PASSWORD}:${ACCOUNT}`], sessionTtlMs: TTL_MS });
    startWorker();
    startWorker();
    await waitFor(() => sandbox.stats().logins >= 1, { timeoutMs: 30_000, intervalMs: 20, what: 'the first login' });
    const firstLoginSeen = Date.now();
    // Sessions from the next login live for the rest of the test: exactly one expiry, whenever the first batch ends.
    sandbox.configure({ sessionTtlMs: 0 });
    expect((await load('first')).code).toBe(0);
    await waitFor(async () => (await outcomes('first')).length === FIRST.length, {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'the first batch',
    });
    // The first session has expired now, whatever it met: the second batch's jobs (up to eight at once) meet the 401.
    await new Promise((r) => setTimeout(r, Math.max(0, firstLoginSeen + TTL_MS + 100 - Date.now())));
    expect((await load('second')).code).toBe(0);
    await waitFor(async () => (await outcomes('second')).length === SECOND.length, {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'the second batch',
    });

    const all = [...(await outcomes('first')), ...(await outcomes('second'))];
    expect(all.filter((o) => o !== 'queued' && o !== 'suspended')).toEqual([]);
    const stats = sandbox.stats();
    expect(stats.logins).toBe(2);
    expect(stats.docflowsCreated).toBe(FIRST.length + SECOND.length);
    expect(await redis.get(keys.pauseReason)).toBeNull();
    // The password and the sessions never in clear: every value of every key under the prefix.
    const values: string[] = [];
    for (const key of await keysOf(redis, prefix)) {
      const type = await redis.type(key);
      if (type === 'string') values.push((await redis.get(key)) ?? '');
      else if (type === 'hash') values.push(...Object.entries(await redis.hgetall(key)).flat());
      else if (type === 'list') values.push(...(await redis.lrange(key, 0, -1)));
      else if (type === 'set') values.push(...(await redis.smembers(key)));
      else if (type === 'zset') values.push(...(await redis.zrange(key, '0', '-1')));
      else if (type === 'stream') values.push(JSON.stringify(await redis.xrange(key, '-', '+')));
    }
    expect(values.join('\n')).not.toContain(PASSWORD);
    // The session is there, sealed: base64 of an IV, the ciphertext and its tag, never a readable id.
    const [gen, box] = await redis.hmget(keys.session, 'gen', 'box');
    expect(Number(gen)).toBeGreaterThanOrEqual(2);
    expect(box).toMatch(/^[A-Za-z0-9+/]{40,}={0,2}$/);
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => new Promise((r) => (w.child.exitCode === null ? w.child.once('exit', r) : r(null)))));
    const logs = workers.map((w) => w.stderr()).join('\n');
    expect(logs).toContain('logged in to the gateway');
    expect(logs).not.toContain(PASSWORD);
    expect(logs).not.toContain('refused the session');
  });

  it('a login refused on renewal pauses the queue for the session after one call of /auth, and sends nothing more', async () => {
    sandbox = await openSandbox({ users: [`${LOGIN}:${PASSWORD}:${ACCOUNT}`], sessionTtlMs: TTL_MS });
    startWorker();
    startWorker();
    await waitFor(() => sandbox.stats().logins >= 1, { timeoutMs: 30_000, intervalMs: 20, what: 'the first login' });
    const firstLoginSeen = Date.now();
    // The password is changed at the gateway: the next login is refused.
    sandbox.configure({ users: [`${LOGIN}:changed:${ACCOUNT}`] });
    await new Promise((r) => setTimeout(r, Math.max(0, firstLoginSeen + TTL_MS + 100 - Date.now())));
    expect((await load('second')).code).toBe(0);
    await waitFor(async () => (await redis.get(keys.pauseReason)) === 'session', {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'the pause',
    });
    expect(sandbox.stats()).toMatchObject({ logins: 1, loginsRefused: 1, docflowsCreated: 0 });
    expect(await outcomes('second')).toEqual([]);
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => new Promise((r) => (w.child.exitCode === null ? w.child.once('exit', r) : r(null)))));
    const logs = workers.map((w) => w.stderr()).join('\n');
    expect(logs).toContain('check REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID');
    expect(logs).not.toContain(PASSWORD);
  });

  it('wrong credentials: one sentence naming REALTY_LOGIN and REALTY_ACCOUNT_ID, exit 1, nothing loaded or sent, the password nowhere', async () => {
    sandbox = await openSandbox({ users: [`${LOGIN}:${PASSWORD}:${ACCOUNT}`] });
    const wrong = 'Wrong-Pa55word-3c9d';
    const run = await runCli(
      [
        'run',
        join(dir, 'first.csv'),
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'wrong',
        '--out',
        join(dir, 'w.csv'),
        '--rejects',
        join(dir, 'w-r.csv'),
      ],
      { ...env(wrong), LOG_LEVEL: 'silent' },
    );
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^realty-batch: The gateway refused the login .*REALTY_LOGIN.*REALTY_ACCOUNT_ID/);
    expect(run.stderr + run.stdout).not.toContain(wrong);
    expect(sandbox.stats()).toMatchObject({ logins: 0, loginsRefused: 1, docflowsCreated: 0, suggestCalls: 0 });
    expect(await outcomes('wrong')).toEqual([]);
  });

  it('a missing half of the login is a configuration error naming the missing variable', async () => {
    sandbox = await openSandbox({});
    const { REALTY_ACCOUNT_ID: _a, ...partial } = env();
    const run = await runCli(['status', '--json'], partial);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      'realty-batch: REALTY_ACCOUNT_ID is not set: REALTY_LOGIN and REALTY_PASSWORD are set, and a login to the gateway needs REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID.',
    );
    expect(run.stderr).not.toContain(PASSWORD);
  });
});
