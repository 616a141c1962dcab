#!/usr/bin/env node
// The first step of `npm test`: what the suite needs before it runs anything.
// - the dependencies (npm ci when node_modules is missing);
// - Redis answering at REDIS_URL (default 127.0.0.1:6379): started, in memory only, when
//   redis-server is installed;
// - PostgreSQL answering at TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres)
//   for the database tests (test/helpers/database.ts): its cluster started when it is installed,
//   Debian's postgresql installed with apt-get when it is not and this user may install packages;
// - Debian's chromium at CHROMIUM_PATH (default /usr/bin/chromium) for the dashboard's
//   browser test: installed with apt-get when this user may install packages.
// - LibreOffice (`soffice`, Debian's libreoffice-calc-nogui) for the Excel round-trip tests, which
//   open the written CSVs and workbooks in it: installed with apt-get likewise.
// What it cannot do, it says in one sentence naming the command to run, and exits 1
// before any test starts.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { redisAnswers } from './redis-ping.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Whether `command` is on the PATH. */
function has(command, env = process.env) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { env, stdio: 'ignore' }).status === 0;
}

/**
 * What to do about chromium: nothing, install it (the command, as root or through sudo),
 * or stop with a sentence. Pure: the tests give it every fact.
 */
export function chromiumPlan({ path, exists, root: isRoot, sudo, aptGet }) {
  if (exists) return { kind: 'ok' };
  const command = ['apt-get', 'install', '-y', '-qq', 'chromium'];
  if (!aptGet) {
    return {
      kind: 'stop',
      sentence: `${path} is missing and this machine has no apt-get: install Chromium and set CHROMIUM_PATH to its binary, then run npm test again.`,
    };
  }
  if (isRoot) return { kind: 'install', prefix: [], command };
  if (sudo) return { kind: 'install', prefix: ['sudo', '-n'], command };
  return {
    kind: 'stop',
    sentence: `${path} is missing, and this user may not install packages: run \`sudo apt-get install -y chromium\`, then npm test again.`,
  };
}

/**
 * What to do about LibreOffice (the Excel round-trip tests open the written CSVs and workbooks
 * in it, headless): nothing, install Debian's libreoffice-calc-nogui, or stop with a sentence.
 * Pure, as above.
 */
export function libreofficePlan({ exists, root: isRoot, sudo, aptGet }) {
  if (exists) return { kind: 'ok' };
  const command = ['apt-get', 'install', '-y', '-qq', 'libreoffice-calc-nogui'];
  if (!aptGet) {
    return {
      kind: 'stop',
      sentence: `soffice (LibreOffice) is missing and this machine has no apt-get: install LibreOffice Calc so that \`soffice\` is on the PATH, then run npm test again.`,
    };
  }
  if (isRoot) return { kind: 'install', prefix: [], command };
  if (sudo) return { kind: 'install', prefix: ['sudo', '-n'], command };
  return {
    kind: 'stop',
    sentence: `soffice (LibreOffice) is missing, and this user may not install packages: run \`sudo apt-get install -y libreoffice-calc-nogui\`, then npm test again.`,
  };
}

/** What to do about Redis: nothing, start it, or stop with a sentence. Pure, as above. */
export function redisPlan({ url, answers, redisServer }) {
  if (answers) return { kind: 'ok' };
  const u = new URL(url);
  const local = u.hostname === '127.0.0.1' || u.hostname === 'localhost';
  if (!local)
    return {
      kind: 'stop',
      sentence: `Redis does not answer at ${u.host} (REDIS_URL): start it, or unset REDIS_URL to use 127.0.0.1:6379.`,
    };
  if (!redisServer)
    return {
      kind: 'stop',
      sentence: `Redis does not answer at ${u.host} and redis-server is not installed: run \`sudo apt-get install -y redis-server\`, then npm test again.`,
    };
  const port = u.port || '6379';
  return {
    kind: 'start',
    command: ['redis-server', '--daemonize', 'yes', '--bind', '127.0.0.1', '--port', port, '--save', '', '--appendonly', 'no'],
  };
}

/** Where the tests' PostgreSQL is (test/helpers/database.ts reads the same). */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * What to do about PostgreSQL: nothing, start the installed cluster, install Debian's (then
 * start it), or stop with a sentence. `versions` are the folders of /etc/postgresql. Pure, as above.
 */
export function postgresPlan({ url, answers, versions, root: isRoot, sudo, aptGet }) {
  if (answers) return { kind: 'ok' };
  const u = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname))
    return {
      kind: 'stop',
      sentence: `PostgreSQL does not answer at ${u.host} (TEST_POSTGRES_URL): start it, or unset TEST_POSTGRES_URL to use 127.0.0.1:5432.`,
    };
  const prefix = isRoot ? [] : sudo ? ['sudo', '-n'] : undefined;
  const version = [...versions]
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(a) - Number(b))
    .at(-1);
  if (version) {
    // Not systemctl: a container or a CI machine has no systemd; pg_ctlcluster starts it alone.
    const command = ['pg_ctlcluster', '--skip-systemctl-redirect', version, 'main', 'start'];
    if (!prefix)
      return {
        kind: 'stop',
        sentence: `PostgreSQL ${version} is installed but does not answer at ${u.host}, and this user may not start it: run \`sudo ${command.join(' ')}\`, then npm test again.`,
      };
    return { kind: 'start', prefix, command, version };
  }
  if (!aptGet)
    return {
      kind: 'stop',
      sentence: `PostgreSQL does not answer at ${u.host} and this machine has no apt-get: install PostgreSQL 13 or later and set TEST_POSTGRES_URL to a user that may create databases, then run npm test again.`,
    };
  if (!prefix)
    return {
      kind: 'stop',
      sentence: `PostgreSQL does not answer at ${u.host}, is not installed, and this user may not install packages: run \`sudo apt-get install -y postgresql\`, then npm test again.`,
    };
  return { kind: 'install', prefix, command: ['apt-get', 'install', '-y', '-qq', 'postgresql'] };
}

/** The errors of a server not (yet) there; 57P03: it is starting up. */
const DOWN_CODES = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENOENT', '57P03'];

/**
 * Whether PostgreSQL at `url` lets this user in: `ok`, `down` (nothing listens yet, or it is
 * starting), or `refused` with the server's reason (a password, a user, a database). pg is
 * imported here, once npm ci has run.
 */
export async function postgresState(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return { state: 'ok' };
  } catch (err) {
    const code = err?.code ?? '';
    const message = String(err?.message ?? err);
    // No code: the connection timed out or was cut, or pg itself would not go on (a server that
    // wants a password and none was given: not down, refused).
    const down = DOWN_CODES.includes(code) || (code === '' && /timeout|terminated/i.test(message));
    return down ? { state: 'down' } : { state: 'refused', reason: message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The versions installed, as Debian lays them out (/etc/postgresql/<version>/<cluster>). */
function postgresVersions() {
  try {
    return readdirSync('/etc/postgresql');
  } catch {
    return [];
  }
}

function say(line) {
  console.log(`prepare-tests: ${line}`);
}

function stop(sentence) {
  console.error(`prepare-tests: ${sentence}`);
  process.exit(1);
}

function run([command, ...args], env) {
  const r = spawnSync(command, args, { cwd: root, stdio: 'inherit', env });
  return r.status === 0;
}

async function main() {
  if (!existsSync(join(root, 'node_modules/.package-lock.json'))) {
    say('installing dependencies (npm ci)...');
    if (!run(['npm', 'ci', '--no-audit', '--no-fund'])) stop('npm ci failed: see its output above.');
  }

  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = redisPlan({ url, answers: await redisAnswers(url), redisServer: has('redis-server') });
  if (redis.kind === 'stop') stop(redis.sentence);
  if (redis.kind === 'start') {
    say(`Redis does not answer at ${new URL(url).host}; starting it, in memory only (${redis.command.join(' ')})`);
    if (!run(redis.command)) stop(`${redis.command.join(' ')} failed: see its output above.`);
    let up = false;
    for (let i = 0; i < 50 && !(up = await redisAnswers(url)); i++) await new Promise((r) => setTimeout(r, 100));
    if (!up) stop(`redis-server started but does not answer at ${new URL(url).host}.`);
  }

  await preparePostgres();

  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  const chromium = chromiumPlan({
    path,
    exists: existsSync(path),
    root: process.getuid?.() === 0,
    sudo: has('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0,
    aptGet: has('apt-get'),
  });
  if (chromium.kind === 'stop') stop(chromium.sentence);
  if (chromium.kind === 'install') {
    say(`${path} is missing; installing Debian's chromium for the dashboard's browser test (about a minute)...`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    if (!run([...chromium.prefix, 'apt-get', 'update', '-qq'], env) || !run([...chromium.prefix, ...chromium.command], env)) {
      stop(`installing chromium failed (see apt-get's output above): run \`sudo apt-get install -y chromium\`, then npm test again.`);
    }
    if (!existsSync(path))
      stop(
        `apt-get installed chromium but ${path} is still missing: set CHROMIUM_PATH to the installed binary (Debian's is /usr/bin/chromium).`,
      );
  }

  const office = libreofficePlan({
    exists: has('soffice'),
    root: process.getuid?.() === 0,
    sudo: has('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0,
    aptGet: has('apt-get'),
  });
  if (office.kind === 'stop') stop(office.sentence);
  if (office.kind === 'install') {
    say("soffice is missing; installing Debian's libreoffice-calc-nogui for the Excel round-trip tests (about a minute)...");
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    if (!run([...office.prefix, 'apt-get', 'update', '-qq'], env) || !run([...office.prefix, ...office.command], env)) {
      stop(
        `installing LibreOffice failed (see apt-get's output above): run \`sudo apt-get install -y libreoffice-calc-nogui\`, then npm test again.`,
      );
    }
    if (!has('soffice')) stop('apt-get installed libreoffice-calc-nogui but soffice is still not on the PATH.');
  }
}

async function preparePostgres() {
  const host = new URL(POSTGRES_URL).host;
  const facts = {
    url: POSTGRES_URL,
    root: process.getuid?.() === 0,
    sudo: has('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0,
    aptGet: has('apt-get'),
  };
  let state = await postgresState(POSTGRES_URL);
  let plan = postgresPlan({ ...facts, answers: state.state !== 'down', versions: postgresVersions() });
  if (plan.kind === 'stop') stop(plan.sentence);
  if (plan.kind === 'install') {
    say(
      `PostgreSQL does not answer at ${host} and is not installed; installing Debian's postgresql for the database tests (about a minute)...`,
    );
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    if (!run([...plan.prefix, 'apt-get', 'update', '-qq'], env) || !run([...plan.prefix, ...plan.command], env)) {
      stop(`installing postgresql failed (see apt-get's output above): run \`sudo apt-get install -y postgresql\`, then npm test again.`);
    }
    // Its package may have started it already; if not, its cluster is started below.
    state = await postgresState(POSTGRES_URL);
    plan = postgresPlan({ ...facts, answers: state.state !== 'down', versions: postgresVersions() });
    if (plan.kind === 'stop' || plan.kind === 'install')
      stop(
        plan.sentence ??
          `apt-get installed postgresql but /etc/postgresql has no cluster: run \`sudo pg_createcluster --start $(ls /usr/lib/postgresql) main\`, then npm test again.`,
      );
  }
  if (plan.kind === 'start') {
    say(`PostgreSQL ${plan.version} does not answer at ${host}; starting it (${plan.command.join(' ')})`);
    if (!run([...plan.prefix, ...plan.command]))
      stop(`${plan.command.join(' ')} failed (see its output above): if the cluster runs on another port, set TEST_POSTGRES_URL to it.`);
  }
  for (let i = 0; i < 150 && state.state === 'down'; i++) {
    await new Promise((r) => setTimeout(r, 200));
    state = await postgresState(POSTGRES_URL);
  }
  if (state.state === 'down') stop(`PostgreSQL was started but does not answer at ${host} after 30 s: see its log in /var/log/postgresql.`);
  if (state.state === 'refused')
    stop(
      `PostgreSQL at ${host} does not let the tests in (${state.reason}): set TEST_POSTGRES_URL to a user that may create databases (postgres://user:password@127.0.0.1:5432/postgres), then npm test again.`,
    );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
