import { PassThrough } from 'node:stream';
import { describe, expect, afterEach } from 'vitest';
import { LOCKED_OUT } from '../../../src/dashboard/auth.js';
import { clientKey, createLoginThrottle } from '../../../src/dashboard/login-throttle.js';
import { CONTENT_SECURITY_POLICY } from '../../../src/dashboard/security.js';
import { startDashboard, type RunningDashboard } from '../../../src/dashboard/server.js';
import { createLogger } from '../../../src/logger.js';
import { basic, call } from '../../helpers/dashboard-batch.js';
import { harness } from '../../helpers/harness.js';

const SECOND = 1000;
const credentials = { user: 'ops', password: 'the night shift' };
const AUTH = basic(credentials.user, credentials.password);
/** What a guesser tries: neither may ever reach a log. */
const GUESS = { user: 'mallory-admin', password: 'Spring2026!guess' };

// For the tests over HTTP: a prefix, a Redis client and a database for each (the throttle's own tests name none).
const it = harness({ label: 'dashboard-throttle', redis: { maxRetriesPerRequest: null } });

describe('the login throttle', () => {
  function clock() {
    let t = 1_000_000;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  }

  it('locks an address out at its 10th wrong try within a minute, for a minute, and leaves other addresses alone', () => {
    const time = clock();
    const throttle = createLoginThrottle({ now: time.now });
    for (let i = 1; i <= 9; i++) expect(throttle.fail('10.0.0.1'), `try ${i}`).toBe(false);
    expect(throttle.lockedFor('10.0.0.1')).toBe(0);
    expect(throttle.fail('10.0.0.1')).toBe(true);
    expect(throttle.lockedFor('10.0.0.1')).toBe(60 * SECOND);
    expect(throttle.lockedFor('10.0.0.2')).toBe(0);
    // Tries during the lock-out neither extend it nor lock it again.
    time.advance(59 * SECOND);
    expect(throttle.fail('10.0.0.1')).toBe(false);
    expect(throttle.lockedFor('10.0.0.1')).toBe(SECOND);
    time.advance(SECOND);
    expect(throttle.lockedFor('10.0.0.1')).toBe(0);
    expect(throttle.fail('10.0.0.1')).toBe(false);
  });

  it('forgets wrong tries older than the minute, so 10 spread over more than a minute lock nothing', () => {
    const time = clock();
    const throttle = createLoginThrottle({ now: time.now });
    for (let i = 0; i < 30; i++) {
      expect(throttle.fail('10.0.0.1'), `try ${i + 1}`).toBe(false);
      time.advance(7 * SECOND);
    }
    expect(throttle.lockedFor('10.0.0.1')).toBe(0);
  });

  it('remembers at most maxAddresses under a spray of addresses, forgetting unlocked ones before a locked one', () => {
    const time = clock();
    const throttle = createLoginThrottle({ now: time.now, maxAddresses: 100 });
    for (let i = 0; i < 10; i++) throttle.fail('192.0.2.1');
    for (let i = 0; i < 20_000; i++) throttle.fail(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(throttle.size).toBe(100);
    expect(throttle.lockedFor('192.0.2.1')).toBe(60 * SECOND);
  });

  it('counts an IPv6 host by its /64, and an IPv4 address written as IPv6 as itself', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0DB8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    const throttle = createLoginThrottle();
    for (let i = 0; i < 10; i++) throttle.fail(`2001:db8:1:2::${i.toString(16)}`);
    expect(throttle.lockedFor('2001:db8:1:2:ffff::9')).toBeGreaterThan(0);
    expect(throttle.lockedFor('2001:db8:1:3::1')).toBe(0);
  });
});

describe('wrong passwords over HTTP', () => {
  let dashboard: RunningDashboard;
  let log: string;
  let now: number;

  it.beforeEach(async ({ redis, keys, db: store }) => {
    log = '';
    const destination = new PassThrough();
    destination.on('data', (d: Buffer) => (log += d.toString()));
    const logger = createLogger({ level: 'info', destination });
    // The throttle's own clock, which the test moves past the minute instead of waiting for it.
    now = Date.now();
    dashboard = await startDashboard({
      redis,
      keys,
      db: store.db,
      host: '127.0.0.1',
      port: 0,
      credentials,
      logger,
      loginThrottle: { now: () => now },
    });
  });
  // Before the harness disconnects Redis and deletes the prefix.
  afterEach(async () => {
    await dashboard?.close();
  });

  it('checks only the first 10 of 300 wrong passwords sent at once, answers 429 with Retry-After even to the right one, and logs the lock-out once without the guesses', async () => {
    const guesses = await Promise.all(
      Array.from({ length: 300 }, () => call(`${dashboard.url}/batches`, { authorization: basic(GUESS.user, GUESS.password) })),
    );
    expect(guesses.filter((a) => a.status === 401)).toHaveLength(10);
    expect(guesses.filter((a) => a.status === 429)).toHaveLength(290);

    const right = await call(`${dashboard.url}/batches`, { authorization: AUTH });
    expect(right.status).toBe(429);
    expect(right.headers.get('retry-after')).toBe('60');
    expect(right.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(right.text).toBe(`${LOCKED_OUT}\n`);
    expect((await call(`${dashboard.url}/metrics`)).status).toBe(429);

    const lines = log
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const lockOuts = lines.filter((l) => String(l.msg).includes('locked out'));
    expect(lockOuts).toHaveLength(1);
    expect(lockOuts[0]).toMatchObject({ level: 40, address: '127.0.0.1', failures: 10 });
    for (const secret of [
      GUESS.user,
      GUESS.password,
      credentials.user,
      credentials.password,
      Buffer.from(`${GUESS.user}:${GUESS.password}`).toString('base64'),
    ]) {
      expect(log).not.toContain(secret);
    }

    now += 59.5 * SECOND;
    const soon = await call(`${dashboard.url}/batches`, { authorization: AUTH });
    expect(soon.status).toBe(429);
    expect(soon.headers.get('retry-after')).toBe('1');
    // Once the lock-out ends the right password is let in again.
    now += SECOND;
    expect((await call(`${dashboard.url}/batches`, { authorization: AUTH })).status).toBe(200);
  });

  it("counts no request that carries no credentials, as a browser's first one", async () => {
    for (let i = 0; i < 30; i++) expect((await call(`${dashboard.url}/batches`)).status).toBe(401);
    expect((await call(`${dashboard.url}/batches`, { authorization: AUTH })).status).toBe(200);
    expect(log).not.toContain('locked out');
  });
});
