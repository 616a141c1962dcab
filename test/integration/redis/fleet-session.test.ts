import { PassThrough } from 'node:stream';
import type { Redis } from 'ioredis';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { LoginRefusedError } from '../../../src/errors.js';
import { createRealtyClient } from '../../../src/realty/client.js';
import { logIn, type Credentials } from '../../../src/realty/session.js';
import { createFleetSession, NO_SESSION_KEY, type FleetSession } from '../../../src/redis/fleet-session.js';
import { createLogger, type Logger } from '../../../src/logger.js';
import { createKeys } from '../../../src/redis/keys.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { harness } from '../../helpers/harness.js';
import { keysOf } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait-for.js';

const CREDENTIALS: Credentials = { login: 'bank-robot', password: 'pa55:w0rd-Secret-7731', accountId: 'acc-42' };
const USER = `${CREDENTIALS.login}:${CREDENTIALS.password}:${CREDENTIALS.accountId}`;
/** REALTY_SESSION_KEY as a fleet is given it (openssl rand -base64 32). */
const SESSION_KEY = 'q3Vq0m3V7rJ1Zl1l9m1WcQ0x8k2H4nYtU5bC6dE7fG8=';

/** A suggest with the session as the gateway sees it: 200 or 401. */
async function statusWith(sandbox: RunningSandbox, sessionId: string): Promise<number> {
  const answer = await request(`${sandbox.url}/realty/v1/news`, { headers: { authorization: `auth.sid ${sessionId}` } });
  await answer.body.dump();
  return answer.statusCode;
}

// A prefix, a Redis client and a sandbox that knows the fleet's user, of each test's own; no database.
const it = harness({ label: 'session', engine: 'none', sandbox: { users: [USER] } });

describe('the fleet session (POST /auth, kept in Redis)', () => {
  let sandbox: RunningSandbox;
  let redis: Redis;
  let prefix: string;

  it.beforeEach(({ prefix: made, redis: client, sandbox: started }) => {
    prefix = made;
    redis = client;
    sandbox = started;
  });

  /** A process of the fleet; without `sessionKey` it seals the session with the password (and says so once). */
  const fleet = (credentials = CREDENTIALS, extra: { sessionKey?: string; logger?: Logger } = {}): FleetSession =>
    createFleetSession({
      redis,
      keys: createKeys(prefix),
      credentials,
      logIn: () => logIn(sandbox.url, credentials, 5000),
      lockMs: 5000,
      pollMs: 10,
      ...extra,
    });

  /** Every value under the test's prefix (strings and hashes). */
  async function storedValues(): Promise<string[]> {
    const values: string[] = [];
    for (const key of await keysOf(redis, prefix)) {
      const type = await redis.type(key);
      if (type === 'string') values.push((await redis.get(key)) ?? '');
      if (type === 'hash') values.push(...Object.entries(await redis.hgetall(key)).flat());
    }
    return values;
  }

  it('with REALTY_SESSION_KEY, seals the session with it: the key is nowhere in Redis, and the password alone cannot open it', async () => {
    const p = fleet(CREDENTIALS, { sessionKey: SESSION_KEY });
    await p.start();
    const { id } = p.current();
    const values = await storedValues();
    expect(values.length).toBeGreaterThan(0);
    for (const value of values) {
      expect(value).not.toContain(SESSION_KEY);
      expect(value).not.toContain(id);
    }
    // Another process given the key takes the stored session: one login for the fleet.
    const sibling = fleet(CREDENTIALS, { sessionKey: SESSION_KEY });
    await sibling.start();
    expect(sibling.current()).toEqual(p.current());
    expect(sandbox.stats().logins).toBe(1);
    // Another key, or the password alone (what whoever reads Redis could try to guess), opens nothing: each logs in itself.
    const otherKey = fleet(CREDENTIALS, { sessionKey: `${SESSION_KEY}-other` });
    await otherKey.start();
    expect(otherKey.current().id).not.toBe(id);
    const passwordOnly = fleet(CREDENTIALS, { logger: createLogger({ level: 'silent' }) });
    await passwordOnly.start();
    expect(passwordOnly.current().id).not.toBe(id);
    expect(sandbox.stats().logins).toBe(3);
  });

  it('without REALTY_SESSION_KEY, says once what to set, and still shares one session sealed with the password', async () => {
    let logged = '';
    const out = new PassThrough();
    out.on('data', (chunk: Buffer) => (logged += chunk.toString()));
    const logger = createLogger({ level: 'info', destination: out });
    const warned = () =>
      logged
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: number; msg: string })
        .filter((l) => l.msg === NO_SESSION_KEY);
    const first = fleet(CREDENTIALS, { logger });
    const second = fleet(CREDENTIALS, { logger });
    await first.start();
    await second.start();
    expect(second.current()).toEqual(first.current());
    expect(sandbox.stats().logins).toBe(1);
    await waitFor(() => logged.endsWith('\n') && warned().length === 2, { timeoutMs: 5000, intervalMs: 10, what: 'the warn lines' });
    expect(warned().every((l) => l.level === 40)).toBe(true);
    expect(NO_SESSION_KEY).toMatch(/^REALTY_SESSION_KEY is not set: .*set REALTY_SESSION_KEY \(or REALTY_SESSION_KEY_FILE/);
    expect(logged).not.toContain(CREDENTIALS.password);
  });

  it('the sandbox answers /auth with a fresh session that expires after --session-ttl-ms, and 400 to wrong credentials', async () => {
    sandbox.configure({ sessionTtlMs: 200 });
    const first = await logIn(sandbox.url, CREDENTIALS, 5000);
    const second = await logIn(sandbox.url, CREDENTIALS, 5000);
    expect(first).not.toBe(second);
    expect(await statusWith(sandbox, first)).toBe(200);
    await expect(logIn(sandbox.url, { ...CREDENTIALS, password: 'wrong' }, 5000)).rejects.toBeInstanceOf(LoginRefusedError);
    await new Promise((r) => setTimeout(r, 250));
    expect(await statusWith(sandbox, first)).toBe(401);
    expect(sandbox.stats()).toMatchObject({ logins: 2, loginsRefused: 1 });
  });

  it('three processes renewing a refused generation at once log in once for all of them, and share the new session', async () => {
    const processes = [fleet(), fleet(), fleet()];
    for (const p of processes) await p.start();
    expect(sandbox.stats().logins).toBe(1);
    const first = processes[0]!.current();
    expect(processes.map((p) => p.current())).toEqual([first, first, first]);

    const renewed = await Promise.all(processes.flatMap((p) => Array.from({ length: 8 }, () => p.renew(first.generation))));
    expect(renewed.every(Boolean)).toBe(true);
    expect(sandbox.stats().logins).toBe(2);
    const second = processes[0]!.current();
    expect(second.generation).toBe(first.generation + 1);
    expect(processes.map((p) => p.current())).toEqual([second, second, second]);
    // A late 401 of the old generation needs no login: the newer session is there.
    await processes[1]!.renew(first.generation);
    expect(sandbox.stats().logins).toBe(2);
    // A process started now takes the stored session.
    const late = fleet();
    await late.start();
    expect(late.current()).toEqual(second);
    expect(sandbox.stats().logins).toBe(2);
  });

  it('keeps the session in Redis encrypted: no value under the prefix is the session or the password', async () => {
    const p = fleet();
    await p.start();
    const { id } = p.current();
    const keys = await keysOf(redis, prefix);
    expect(keys).toContain(createKeys(prefix).session);
    const values: string[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === 'string') values.push((await redis.get(key)) ?? '');
      if (type === 'hash') values.push(...Object.entries(await redis.hgetall(key)).flat());
    }
    expect(values.length).toBeGreaterThan(0);
    for (const value of values) {
      expect(value).not.toContain(id);
      expect(value).not.toContain(CREDENTIALS.password);
      expect(await statusWith(sandbox, value)).toBe(401);
    }
    // Another password cannot open it: that process logs in for itself (the stored one stays unreadable to it).
    const other = fleet({ ...CREDENTIALS, password: 'another' });
    sandbox.configure({ users: [`${CREDENTIALS.login}:another:${CREDENTIALS.accountId}`] });
    await other.start();
    expect(other.current().id).not.toBe(id);
  });

  it('a refused login fails every process waiting for it, after one call of /auth', async () => {
    const processes = [fleet(), fleet()];
    for (const p of processes) await p.start();
    const { generation } = processes[0]!.current();
    sandbox.configure({ users: [] });
    const renewals = processes.flatMap((p) => Array.from({ length: 4 }, () => p.renew(generation)));
    const settled = await Promise.allSettled(renewals);
    expect(settled.every((s) => s.status === 'rejected' && s.reason instanceof LoginRefusedError)).toBe(true);
    expect(sandbox.stats().loginsRefused).toBe(1);
    for (const s of settled) expect(String((s as PromiseRejectedResult).reason.message)).not.toContain(CREDENTIALS.password);
    // Later 401s of that generation, in any process, do not knock at /auth again ...
    const third = fleet();
    await expect(processes[1]!.renew(generation)).rejects.toBeInstanceOf(LoginRefusedError);
    expect(sandbox.stats().loginsRefused).toBe(1);
    // ... but a process that starts tries once: here the operator has fixed the account.
    sandbox.configure({ users: [USER] });
    await third.start();
    expect(third.current().generation).toBe(generation + 1);
    expect(sandbox.stats()).toMatchObject({ logins: 2, loginsRefused: 1 });
    expect(await processes[0]!.renew(generation)).toBe(true);
    expect(processes[0]!.current()).toEqual(third.current());
  });

  it('the client sends the renewed session again once after a 401, and gives up the 401 of a fixed session id', async () => {
    sandbox.configure({ sessionTtlMs: 300 });
    const p = fleet();
    await p.start();
    const client = createRealtyClient({ baseUrl: sandbox.url, session: p, timeoutMs: 5000 });
    const fixed = createRealtyClient({ baseUrl: sandbox.url, sessionId: 'not-a-session', timeoutMs: 5000 });
    try {
      await client.news();
      await new Promise((r) => setTimeout(r, 350));
      await client.news();
      expect(p.current().generation).toBe(2);
      expect(sandbox.stats().logins).toBe(2);
      await expect(fixed.news()).rejects.toMatchObject({ status: 401 });
    } finally {
      await client.close();
      await fixed.close();
    }
  });
});
