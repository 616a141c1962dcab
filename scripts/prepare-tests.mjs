#!/usr/bin/env node
// The first step of `npm test`: what the suite needs before it runs anything.
// - the dependencies (npm ci when node_modules is missing);
// - Redis answering at REDIS_URL (default 127.0.0.1:6379): started, in memory only, when
//   redis-server is installed;
// - Debian's chromium at CHROMIUM_PATH (default /usr/bin/chromium) for the dashboard's
//   browser test: installed with apt-get when this user may install packages.
// What it cannot do, it says in one sentence naming the command to run, and exits 1
// before any test starts.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
