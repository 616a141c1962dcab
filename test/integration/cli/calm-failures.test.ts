/**
 * Fail fast and calm (issue 40, point 7): a wrong gateway url stops `run`, `work` and `track` at
 * once in one sentence naming the url, nothing loaded; a gateway that stops answering is one warn
 * line a minute, not a line per try; a night with no deals (a header-only file) is a quiet
 * success, for `run` and for the nightly inbox.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { checkGatewayReachable } from '../../../src/cli/gateway-check.js';
import { GatewayUnreachableError } from '../../../src/errors.js';
import { createLogger } from '../../../src/logger.js';
import { describe as describeFile } from '../../../src/schedule/file-summary.js';
import { runTick } from '../../../src/schedule/run-tick.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER } from '../../helpers/fixtures.js';
import { freePort } from '../../helpers/ports.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

const SESSION = 'calm-secret-session';

/** A gateway whose news feed answers (passed to the sandbox) and whose every other call is dropped without an answer. */
async function feedOnlyProxy(target: string): Promise<{ url: string; server: Server; dropped: () => number }> {
  let dropped = 0;
  const server = createServer((req, res) => {
    if (!req.url?.startsWith('/realty/v1/news')) {
      dropped++;
      req.socket.destroy();
      return;
    }
    const upstream = request(new URL(req.url, target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, dropped: () => dropped };
}

// The prefix and folder once for the file. A database of each test's own: a deployment's database
// is bound to the first gateway it ran with. A test that needs a sandbox opens its own.
const it = harness({ per: 'file', each: ['db'], label: 'calm', sandbox: { sessions: [SESSION] } });

describe('fail fast and calm', { timeout: 90_000 }, () => {
  let prefix: string;
  let store: UsedDatabase;
  let dir: string;
  let closedUrl: string;
  const servers: Server[] = [];
  const env = (apiUrl: string, more: Record<string, string> = {}) => ({
    REDIS_URL,
    REALTY_API_URL: apiUrl,
    REALTY_SESSION_ID: SESSION,
    REALTY_PREFIX: prefix,
    DATABASE_URL: store.url,
    LOG_LEVEL: 'warn',
    ...more,
  });
  const run = (apiUrl: string, file: string, batch: string, extra: string[] = []) =>
    runCli(
      [
        'run',
        file,
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        batch,
        '--out',
        join(dir, `${batch}.results.csv`),
        '--rejects',
        join(dir, `${batch}.rejects.csv`),
        ...extra,
      ],
      env(apiUrl),
    );

  it.beforeAll(async ({ prefix: made, dir: folder }) => {
    prefix = made;
    dir = folder;
    // A port nobody listens on: connections to it are refused.
    closedUrl = `http://127.0.0.1:${await freePort()}`;
  });
  it.beforeEach(({ db }) => {
    store = db;
  });
  afterAll(async () => {
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
  });

  it('stops run at once on a refused connection: one sentence naming the url, never the session, exit 1, nothing loaded', async () => {
    const result = await run(closedUrl, 'samples/deals.csv', 'refused');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `realty-batch: The gateway at ${closedUrl} cannot be reached (the connection was refused): check REALTY_API_URL and the network, then run this command again; nothing was loaded or sent.\n`,
    );
    expect(result.stderr + result.stdout).not.toContain(SESSION);
    expect(existsSync(join(dir, 'refused.results.csv'))).toBe(false);
    const status = await runCli(['status', 'refused'], env(closedUrl));
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('There is no batch refused');
  });

  it('stops run on a host name nobody knows, naming the url without its user or password', async () => {
    const result = await run('http://user:pw@realty-gateway.invalid:8443/base/', 'samples/deals.csv', 'unknown-host');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^realty-batch: The gateway at http:\/\/realty-gateway\.invalid:8443\/base cannot be reached \(the host name is not known\): [^\n]+\.\n$/,
    );
    expect(result.stderr).not.toContain('pw');
  });

  it('stops work and track at their start on a refused connection, in the same sentence', async () => {
    for (const command of ['work', 'track']) {
      const result = await runCli([command], env(closedUrl), 30_000);
      expect(result.code, command).toBe(1);
      expect(result.stderr, command).toContain(`realty-batch: The gateway at ${closedUrl} cannot be reached (the connection was refused)`);
      expect(result.stderr.trim().split('\n'), command).toHaveLength(1);
    }
  });

  it('lets a command go on when the gateway takes the connection', async ({ openSandbox }) => {
    const sandbox = await openSandbox();
    await expect(checkGatewayReachable(sandbox.url, 2000)).resolves.toBeUndefined();
    await expect(checkGatewayReachable(closedUrl, 2000)).rejects.toBeInstanceOf(GatewayUnreachableError);
    expect(sandbox.stats().suggestCalls).toBe(0);
  });

  it('says a gateway that stops answering once a minute, not once a try', async ({ openSandbox }) => {
    // The news feed answers (deals wait for it before they are sent); every other call's connection
    // is dropped unanswered: the deals fail their tries without an answer and end failed.
    const sandbox = await openSandbox();
    const stalled = await feedOnlyProxy(sandbox.url);
    servers.push(stalled.server);
    const result = await run(stalled.url, 'samples/deals.csv', 'stalled', [
      '--attempts',
      '2',
      '--backoff-ms',
      '20',
      '--breaker-cooldown-ms',
      '50',
      '--concurrency',
      '8',
      '--feed-lag-ms',
      '200',
    ]);
    expect(result.code, result.stderr).toBe(3);
    const results = readFileSync(join(dir, 'stalled.results.csv'), 'utf8');
    const failed = results.split('\n').filter((l) => l.includes(',failed,')).length;
    expect(failed).toBeGreaterThan(10);
    const lines = result.stderr.split('\n').filter((l) => l.includes('transient failure, will retry'));
    // Each of more than ten deals failed a first try without an answer: one line says so.
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"failedTriesSinceLastLine":1');
    expect(result.stderr).not.toContain(SESSION);
    expect(stalled.dropped()).toBeGreaterThan(20);
  });

  it('takes a header-only file as a night with no deals: exit 0, a results file of its header, "no deals"', async ({ openSandbox }) => {
    const sandbox = await openSandbox();
    const file = join(dir, 'quiet.csv');
    await writeFile(file, csvText([]));
    const result = await run(sandbox.url, file, 'quiet');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/no records|error/i);
    expect(result.stdout).toContain('read 0, valid 0, invalid 0');
    expect(result.stdout).toContain(`no deals: ${file} holds no record; nothing was sent`);
    const lines = readFileSync(join(dir, 'quiet.results.csv'), 'utf8')
      .replace(/^\uFEFF/, '')
      .split(/\r?\n/)
      .filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^row[,;]dealId[,;]outcome/);
    expect(sandbox.stats().suggestCalls).toBe(0);
  });

  it('lets the nightly inbox call a header-only file done, with its results in the outbox', async ({ redis, keys }) => {
    const inbox = join(dir, 'inbox');
    const outbox = join(dir, 'outbox');
    await mkdir(inbox);
    await mkdir(outbox);
    await writeFile(join(inbox, 'night.csv'), csvText([], { header: HEADER }));
    const result = await runTick(
      { name: 'quiet', inbox, outbox, profile: join(ROOT, 'samples/bank-profile.json'), settleMs: 0 },
      { redis, keys, db: store.db, logger: createLogger({ level: 'silent' }), pollMs: 50 },
    );
    expect(result.files).toMatchObject([{ file: 'night.csv', status: 'done', rows: 0, exitStatus: 0 }]);
    expect(describeFile(result.files[0]!)).toMatch(/^night\.csv → batch \S+: no deals \(a header and no record\), exit 0$/);
    const results = readFileSync(join(outbox, 'night.csv.results.csv'), 'utf8').replace(/^\uFEFF/, '');
    expect(results.split(/\r?\n/).filter(Boolean)).toHaveLength(1);
  });
});
