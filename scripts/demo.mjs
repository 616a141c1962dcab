#!/usr/bin/env node
// `npm run demo`: the samples end to end on this machine, against the sandbox.
// Installs what is missing, builds, finds or starts Redis, starts the sandbox on a
// free port, runs `realty-batch run` with short retry delays, prints the summary,
// and exits 0 when every row ended as samples/README.md says.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareWithExpected, readExpectedOutcomes } from './sample-expectations.mjs';
import { redisAnswers } from './redis-ping.mjs';
import { demoLife } from './demo-life.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist/bin/realty-batch.js');
const say = (line) => console.log(`demo: ${line}`);
const fail = (line) => {
  console.error(`demo: ${line}`);
  process.exit(1);
};

function step(command, args, what) {
  const r = spawnSync(command, args, { cwd: root, stdio: 'inherit', shell: false });
  if (r.status !== 0) fail(`${what} failed (${command} ${args.join(' ')} exited ${r.status ?? r.signal}).`);
}

if (!existsSync(join(root, 'node_modules/.package-lock.json')) || !existsSync(join(root, 'node_modules/bullmq'))) {
  say('installing dependencies (npm ci)...');
  step('npm', ['ci', '--no-audit', '--no-fund'], 'npm ci');
}
say('building...');
step('npm', ['run', '--silent', 'build'], 'the build');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const children = [];
const cleanup = () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
};
process.on('exit', cleanup);
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => process.exit(130));

let redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!(await redisAnswers(redisUrl))) {
  const which = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  if (which.status !== 0)
    fail(
      `Redis does not answer at ${redisUrl} and redis-server is not installed: install Redis (apt-get install redis-server) or set REDIS_URL.`,
    );
  const port = await freePort();
  say(`Redis does not answer at ${redisUrl}; starting a private one on port ${port} (stopped afterwards)`);
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  children.push(redis);
  redisUrl = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50 && !(await redisAnswers(redisUrl)); i++) await new Promise((r) => setTimeout(r, 100));
  if (!(await redisAnswers(redisUrl))) fail('the private redis-server did not start.');
}

// The sandbox, with the EGRON region so the unavailable row shows, and short lives (a step every 300 ms).
const sandbox = spawn(process.execPath, [cli, 'sandbox', '--port', '0', '--egron-regions', 'Республика Крым', '--lifecycle-ms', '300'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'pipe'],
});
children.push(sandbox);
let sandboxErrors = '';
sandbox.stderr.on('data', (d) => (sandboxErrors += d.toString()));
const sandboxUrl = await new Promise((resolve, reject) => {
  let text = '';
  sandbox.stdout.on('data', (d) => {
    text += d.toString();
    const m = text.match(/listening on (http:\/\/\S+)/);
    if (m) resolve(m[1]);
  });
  sandbox.once('exit', (code) => reject(new Error(`the sandbox exited (${code}): ${sandboxErrors.trim()}`)));
}).catch((err) => fail(err.message));
say(`sandbox at ${sandboxUrl}; Redis at ${redisUrl.replace(/\/\/[^@]*@/, '//')}`);

// A prefix of its own, emptied first: the demo's ledger must not remember an earlier demo.
const prefix = 'realty-demo';
const { Redis } = await import('ioredis');
const redis = new Redis(redisUrl, { lazyConnect: true });
await redis.connect();
const filesPrefix = 'realty-demo-files';
for (const p of [prefix, filesPrefix]) {
  const stale = await redis.keys(`{${p}}*`);
  if (stale.length > 0) await redis.del(...stale);
}
await redis.quit();

const out = join(root, 'out/results.csv');
const run = spawnSync(
  process.execPath,
  [
    cli,
    'run',
    'samples/deals.csv',
    '--profile',
    'samples/bank-profile.json',
    '--out',
    out,
    '--rejects',
    join(root, 'out/rejects.csv'),
    '--attention',
    join(root, 'out/attention.csv'),
    '--batch',
    'demo',
    '--attempts',
    '3',
    '--backoff-ms',
    '200',
    '--concurrency',
    '8',
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      REDIS_URL: redisUrl,
      REALTY_API_URL: sandboxUrl,
      REALTY_SESSION_ID: 'demo-session',
      REALTY_PREFIX: prefix,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    },
  },
);
if (run.status !== 0 && run.status !== 3) fail(`realty-batch run exited ${run.status ?? run.signal}.`);

const stats = await fetch(`${sandboxUrl}/__sandbox/stats`).then((r) => r.json());
say(
  `sandbox: ${stats.docflowsCreated} docflows created, ${stats.suggestCalls} suggest calls, requestIds with several docflows ${stats.requestIdsWithSeveralDocflows}`,
);
if (stats.requestIdsWithSeveralDocflows > 0) fail('a deal was submitted twice: the sandbox holds several docflows for one requestId.');

const { parse } = await import('csv-parse/sync');
const rows = parse(readFileSync(out), { columns: true });
const problems = compareWithExpected(readExpectedOutcomes(join(root, 'samples/README.md')), rows);
if (problems.length > 0) fail(`the outcomes differ from samples/README.md:\n  ${problems.join('\n  ')}`);
say(`all ${rows.length} rows ended as samples/README.md expects; results in out/results.csv`);
await demoLife({
  root,
  cli,
  sandboxUrl,
  say,
  fail,
  env: {
    ...process.env,
    REDIS_URL: redisUrl,
    REALTY_API_URL: sandboxUrl,
    REALTY_SESSION_ID: 'demo-session',
    REALTY_PREFIX: filesPrefix,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
  },
});
// Written for Russian Excel: a BOM, ';' and CRLF.
const attentionRows = parse(readFileSync(join(root, 'out/attention.csv')), { columns: true, bom: true, delimiter: ';' }).length;
// Where to look next: the batch stays in Redis (prefix realty-demo) until the next demo.
const privateRedis = redisUrl !== (process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const env = process.env.REDIS_URL ? `REALTY_PREFIX=realty-demo REDIS_URL=${process.env.REDIS_URL}` : 'REALTY_PREFIX=realty-demo';
const where = privateRedis
  ? `
  (the demo's private Redis stops with it: start Redis on 127.0.0.1:6379 and run the demo again to try status and the dashboard)`
  : `
  ${env} node dist/bin/realty-batch.js status demo
                       the batch at a glance (counts, times, rows/s)
  ${env} node dist/bin/realty-batch.js dashboard --no-auth --host 127.0.0.1
                       the operations page: http://127.0.0.1:3000/batches (Bull Board at /queues)`;
console.log(`
next:
  out/results.csv      one line per input row: outcome, docflowId, errorCode, errorMessage
  out/attention.csv    the ${attentionRows} rows that need a person (refused, or waiting for signatures), in the input's own columns, with a hint each
  out/rejects.csv      the rows refused at load, with the field and the problem
  out/files.results.csv  the file-based deals, each with its registry state (completed)
  out/to-sign/, out/documents/  the application files signed by the demo, and the registry's extracts${where}`);
cleanup();
process.exit(0);
