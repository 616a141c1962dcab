/**
 * `npm test`'s first step (scripts/prepare-tests.mjs): it installs Debian's chromium and
 * PostgreSQL and starts Redis and PostgreSQL when they are missing, or stops before any test
 * with one sentence. CI
 * cannot show it on a machine without chromium, so these runs put a fake apt-get (and a
 * fake sudo) first on the PATH and point CHROMIUM_PATH at a file that does not exist yet.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the scripts folder, with no type declarations.
import { chromiumPlan, postgresPlan, redisPlan } from '../../../scripts/prepare-tests.mjs';
import { childEnv, ROOT } from '../../helpers/cli.js';
import { freePort } from '../../helpers/ports.js';

const SCRIPT = join(ROOT, 'scripts/prepare-tests.mjs');

interface Plan {
  kind: string;
  prefix?: string[];
  command?: string[];
  sentence?: string;
}
const planChromium = chromiumPlan as (facts: { path: string; exists: boolean; root: boolean; sudo: boolean; aptGet: boolean }) => Plan;
const planRedis = redisPlan as (facts: { url: string; answers: boolean; redisServer: boolean }) => Plan;
const planPostgres = postgresPlan as (facts: {
  url: string;
  answers: boolean;
  versions: string[];
  root: boolean;
  sudo: boolean;
  aptGet: boolean;
}) => Plan;

describe('what npm test does about chromium', () => {
  let dir: string;
  let bin: string;
  let log: string;
  let chromium: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prepare-tests-'));
    bin = join(dir, 'bin');
    log = join(dir, 'apt-get.log');
    chromium = join(dir, 'chromium');
    spawnSync('mkdir', [bin]);
    // sudo -n <command>: runs the command (so the fake apt-get is the one called, never the real one).
    writeFileSync(join(bin, 'sudo'), '#!/bin/sh\n[ "$1" = "-n" ] && shift\nexec "$@"\n');
    chmodSync(join(bin, 'sudo'), 0o755);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function fakeAptGet(exitCode: number): void {
    // Logs each call with the environment's DEBIAN_FRONTEND; `install` makes the browser appear.
    writeFileSync(
      join(bin, 'apt-get'),
      `#!/bin/sh\necho "$DEBIAN_FRONTEND $*" >> "${log}"\n[ "$1" = "install" ] && [ ${exitCode} = 0 ] && touch "${chromium}"\nexit ${exitCode}\n`,
    );
    chmodSync(join(bin, 'apt-get'), 0o755);
  }

  function prepare() {
    return spawnSync(process.execPath, [SCRIPT], {
      cwd: ROOT,
      encoding: 'utf8',
      env: childEnv({ PATH: `${bin}:${process.env.PATH ?? ''}`, CHROMIUM_PATH: chromium }),
    });
  }

  it('installs chromium with apt-get, non-interactively, when it is missing, and succeeds', () => {
    fakeAptGet(0);
    const r = prepare();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['noninteractive update -qq', 'noninteractive install -y -qq chromium']);
    expect(r.stdout).toContain("installing Debian's chromium");
    expect(existsSync(chromium)).toBe(true);
  });

  it('stops before any test with one sentence naming the command when apt-get fails', () => {
    fakeAptGet(100);
    const r = prepare();
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^prepare-tests: installing chromium failed .*run `sudo apt-get install -y chromium`, then npm test again\.$/);
  });

  it('leaves a machine that has chromium alone', () => {
    fakeAptGet(0);
    writeFileSync(chromium, '');
    const r = prepare();
    expect(r.status).toBe(0);
    expect(existsSync(log)).toBe(false);
    expect(r.stdout).toBe('');
  });

  it('installs as root without sudo, through sudo -n for a user who may, and otherwise names the command', () => {
    const facts = { path: '/usr/bin/chromium', exists: false, aptGet: true };
    expect(planChromium({ ...facts, root: true, sudo: false })).toMatchObject({ kind: 'install', prefix: [] });
    expect(planChromium({ ...facts, root: false, sudo: true })).toMatchObject({ kind: 'install', prefix: ['sudo', '-n'] });
    expect(planChromium({ ...facts, root: false, sudo: false }).sentence).toBe(
      '/usr/bin/chromium is missing, and this user may not install packages: run `sudo apt-get install -y chromium`, then npm test again.',
    );
    expect(planChromium({ ...facts, root: true, sudo: false, aptGet: false }).sentence).toMatch(
      /no apt-get: install Chromium and set CHROMIUM_PATH/,
    );
  });
});

describe('what npm test does about Redis', () => {
  it('starts redis-server in memory on the port of REDIS_URL when nothing answers there', async () => {
    const port = await freePort();
    const r = spawnSync(process.execPath, [SCRIPT], {
      cwd: ROOT,
      encoding: 'utf8',
      env: childEnv({ REDIS_URL: `redis://127.0.0.1:${port}`, CHROMIUM_PATH: process.execPath }),
    });
    const redis = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    redis.on('error', () => undefined);
    try {
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toContain(
        `starting it, in memory only (redis-server --daemonize yes --bind 127.0.0.1 --port ${port} --save  --appendonly no)`,
      );
      await redis.connect();
      expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
      expect(await redis.config('GET', 'save')).toEqual(['save', '']);
    } finally {
      await redis.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
      redis.disconnect();
    }
  });

  it('names what to do when Redis is elsewhere or not installed', () => {
    expect(planRedis({ url: 'redis://10.0.0.5:6379', answers: false, redisServer: true }).sentence).toBe(
      'Redis does not answer at 10.0.0.5:6379 (REDIS_URL): start it, or unset REDIS_URL to use 127.0.0.1:6379.',
    );
    expect(planRedis({ url: 'redis://127.0.0.1:6379', answers: false, redisServer: false }).sentence).toMatch(
      /redis-server is not installed: run `sudo apt-get install -y redis-server`/,
    );
    expect(planRedis({ url: 'redis://127.0.0.1:6379', answers: true, redisServer: false }).kind).toBe('ok');
  });
});

describe('what npm test does about PostgreSQL', () => {
  const LOCAL = 'postgres://postgres@127.0.0.1:5432/postgres';
  const facts = { url: LOCAL, answers: false, versions: ['15'], root: true, sudo: false, aptGet: true };

  it('leaves a server that answers alone, and starts the newest installed cluster without systemd when it does not', () => {
    expect(planPostgres({ ...facts, answers: true }).kind).toBe('ok');
    expect(planPostgres({ ...facts, versions: ['13', '15', 'README'] })).toEqual({
      kind: 'start',
      prefix: [],
      command: ['pg_ctlcluster', '--skip-systemctl-redirect', '15', 'main', 'start'],
      version: '15',
    });
    expect(planPostgres({ ...facts, root: false, sudo: true })).toMatchObject({ kind: 'start', prefix: ['sudo', '-n'] });
    expect(planPostgres({ ...facts, root: false, sudo: false }).sentence).toBe(
      'PostgreSQL 15 is installed but does not answer at 127.0.0.1:5432, and this user may not start it: run `sudo pg_ctlcluster --skip-systemctl-redirect 15 main start`, then npm test again.',
    );
  });

  it("installs Debian's postgresql when none is, as root or through sudo -n, and otherwise names the command", () => {
    const none = { ...facts, versions: [] };
    expect(planPostgres(none)).toEqual({ kind: 'install', prefix: [], command: ['apt-get', 'install', '-y', '-qq', 'postgresql'] });
    expect(planPostgres({ ...none, root: false, sudo: true })).toMatchObject({ kind: 'install', prefix: ['sudo', '-n'] });
    expect(planPostgres({ ...none, root: false, sudo: false }).sentence).toBe(
      'PostgreSQL does not answer at 127.0.0.1:5432, is not installed, and this user may not install packages: run `sudo apt-get install -y postgresql`, then npm test again.',
    );
    expect(planPostgres({ ...none, aptGet: false }).sentence).toMatch(
      /no apt-get: install PostgreSQL 13 or later and set TEST_POSTGRES_URL/,
    );
  });

  it('names TEST_POSTGRES_URL when the server it names is elsewhere and does not answer', () => {
    expect(planPostgres({ ...facts, url: 'postgres://ci@10.0.0.7:5433/postgres' }).sentence).toBe(
      'PostgreSQL does not answer at 10.0.0.7:5433 (TEST_POSTGRES_URL): start it, or unset TEST_POSTGRES_URL to use 127.0.0.1:5432.',
    );
  });

  it('stops before any test with one sentence when the server answers but does not let the tests in', () => {
    const url = new URL(process.env.TEST_POSTGRES_URL || LOCAL);
    url.pathname = '/realty_no_such_database';
    const r = spawnSync(process.execPath, [SCRIPT], {
      cwd: ROOT,
      encoding: 'utf8',
      env: childEnv({ TEST_POSTGRES_URL: url.toString(), CHROMIUM_PATH: process.execPath }),
    });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `prepare-tests: PostgreSQL at ${url.host} does not let the tests in (database "realty_no_such_database" does not exist): set TEST_POSTGRES_URL to a user that may create databases (postgres://user:password@127.0.0.1:5432/postgres), then npm test again.`,
    ]);
  });
});
