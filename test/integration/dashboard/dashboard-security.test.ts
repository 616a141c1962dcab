import { Queue } from 'bullmq';
import { describe, expect, afterAll } from 'vitest';
import { BAD_FORMAT } from '../../../src/dashboard/batches.js';
import { CONTENT_SECURITY_POLICY, FOREIGN_ORIGIN, parsePublicUrl } from '../../../src/dashboard/security.js';
import { startDashboard, type RunningDashboard } from '../../../src/dashboard/server.js';
import { runCli } from '../../helpers/cli.js';
import { basic, batchHarness, BY_SUGGEST, INVALID, runDashboardBatch, type DashboardBatch } from '../../helpers/dashboard-batch.js';
import { REDIS_URL } from '../../helpers/redis.js';

const credentials = { user: 'ops', password: 'the night shift' };
const AUTH = basic(credentials.user, credentials.password);

const it = batchHarness({ label: 'dashboard-security' });

/** A policy's directives by name. */
function directives(policy: string | undefined): Map<string, string[]> {
  return new Map(
    (policy ?? '')
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

function expectSecurityHeaders(headers: Headers, what: string): void {
  expect(headers.get('content-security-policy'), what).toBe(CONTENT_SECURITY_POLICY);
  expect(headers.get('x-frame-options'), what).toBe('DENY');
  expect(headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(headers.get('referrer-policy'), what).toBe('no-referrer');
}

describe("the operations page's headers and origins", () => {
  let night: DashboardBatch;
  let dashboard: RunningDashboard;
  let proxied: RunningDashboard;
  let queue: Queue;

  it.beforeAll(async ({ redis, keys, prefix, db, dir, sandbox, profile }) => {
    night = await runDashboardBatch({ redis, keys, prefix, db, dir, sandbox, profile }, [BY_SUGGEST, INVALID]);
    const common = { redis: night.redis, keys: night.keys, db: night.db, host: '127.0.0.1', port: 0, credentials };
    dashboard = await startDashboard(common);
    proxied = await startDashboard({ ...common, publicOrigin: 'https://ops.example.com' });
    queue = new Queue(night.keys.queueName, { connection: night.redis, prefix: night.keys.bullPrefix });
  });
  afterAll(async () => {
    await queue?.close();
    await dashboard?.close();
    await proxied?.close();
  });

  /** One HTTP request as a browser or curl would send it. */
  async function send(
    path: string,
    init: { method?: string; headers?: Record<string, string>; base?: string } = {},
  ): Promise<{ status: number; headers: Headers; text: string }> {
    const response = await fetch(`${init.base ?? dashboard.url}${path}`, {
      method: init.method ?? 'GET',
      headers: init.headers ?? { authorization: AUTH },
      redirect: 'manual',
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  it("puts the policy, frame, sniffing and referrer headers on every answer: pages, files, metrics, Bull Board's API and static files, refusals, 401s, 404s and errors", async () => {
    const board = await send('/queues');
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(board.text)?.[1];
    expect(script).toBeDefined();
    const answers: Array<[string, number, Parameters<typeof send>[1]?]> = [
      ['/', 302],
      ['/batches', 200],
      ['/batches/night/results.csv', 200],
      ['/batches/night/results.csv?format=jsonl', 200],
      ['/batches/night/attention.csv', 200],
      ['/metrics', 200],
      ['/queues', 200],
      ['/queues/api/queues', 200],
      [`/queues/${script}`, 200],
      ['/queues/static/favicon-32x32.png', 200],
      ['/batches', 401, { headers: {} }],
      ['/queues/api/queues', 401, { headers: { authorization: basic('ops', 'wrong') } }],
      ['/batches/night/results.csv?format=xml', 400],
      ['/batches/%E0%A4%A/results.csv', 400],
      ['/nowhere', 404],
      ['/queues/static/nowhere.js', 404],
      ['/batches/nope/results.csv', 404],
      ['/queues/api/queues/deals/empty', 405, { method: 'PUT' }],
      ['/queues/api/queues/deals/pause', 403, { method: 'PUT', headers: { authorization: AUTH, origin: 'https://evil.example' } }],
    ];
    for (const [path, status, init] of answers) {
      const answer = await send(path, init);
      expect(answer.status, path).toBe(status);
      expectSecurityHeaders(answer.headers, `${init?.method ?? 'GET'} ${path} (${status})`);
    }
  });

  it("lets only the page's own scripts run (no inline script, no eval), in no frame, and Bull Board's page loads nothing from elsewhere", async () => {
    const policy = directives(CONTENT_SECURITY_POLICY);
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.get('object-src') ?? policy.get('default-src')).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval|https?:|\*/);

    const board = await send('/queues');
    // Every script of its page is its own file, or data the policy does not govern.
    const scripts = [...board.text.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(1);
    for (const attributes of scripts) expect(attributes).toMatch(/\bsrc="static\/js\/[^"]+\.js"|type="application\/json"/);
    expect(board.text).not.toMatch(/\b(?:src|href)="(?:https?:)?\/\//);
  });

  it('answers a wrong format, an unknown page and an unreadable address with fixed sentences that repeat nothing of the request', async () => {
    const format = await send(`/batches/night/results.csv?format=${encodeURIComponent('<script>alert(1)</script>')}`);
    expect(format.status).toBe(400);
    expect(format.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(format.text).toBe(`${BAD_FORMAT}\n`);
    const unknown = await send(`/${encodeURIComponent('<img src=x onerror=alert(1)>')}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toBe('There is no such page on the realty-batch dashboard.\n');
    const unreadable = await send('/batches/%3Cb%3E%E0%A4%A/results.csv');
    expect(unreadable.status).toBe(400);
    expect(unreadable.text).toBe('The dashboard cannot read that address.\n');
  });

  it("refuses with 403 a mutation whose Origin, or else Referer, is another site's, and changes nothing", async () => {
    const own = new URL(dashboard.url);
    const foreign: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: `http://${own.hostname}:${Number(own.port) + 1}` },
      { origin: `https://${own.host}` },
      { referer: 'https://evil.example/queues' },
      { origin: 'https://evil.example', referer: `${dashboard.url}/queues` },
    ];
    for (const headers of foreign) {
      const answer = await send('/queues/api/queues/deals/pause', { method: 'PUT', headers: { authorization: AUTH, ...headers } });
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(answer.text).toBe(`${FOREIGN_ORIGIN}\n`);
    }
    expect(await queue.isPaused()).toBe(false);
  });

  it("lets a mutation through from the page's own origin or referer, and from a client that sends neither (curl with the credentials)", async () => {
    try {
      expect(
        (await send('/queues/api/queues/deals/pause', { method: 'PUT', headers: { authorization: AUTH, origin: dashboard.url } })).status,
      ).toBe(200);
      expect(await queue.isPaused()).toBe(true);
      expect(
        (
          await send('/queues/api/queues/deals/resume', {
            method: 'PUT',
            headers: { authorization: AUTH, referer: `${dashboard.url}/queues/queue/deals` },
          })
        ).status,
      ).toBe(200);
      expect(await queue.isPaused()).toBe(false);
      expect((await send('/queues/api/queues/deals/pause', { method: 'PUT' })).status).toBe(200);
      expect(await queue.isPaused()).toBe(true);
    } finally {
      await queue.resume();
    }
  });

  it('with a public URL, lets through only mutations from that origin, whatever the Host says', async () => {
    // The Host is the public URL's (a foreign one is refused before the origin is looked at: dashboard-host.test.ts).
    const mutation = (origin: string, host = 'ops.example.com') =>
      proxied.app.inject({
        method: 'PUT',
        url: '/queues/api/queues/deals/pause',
        headers: { authorization: AUTH, origin, host },
      });
    try {
      expect((await mutation('https://ops.example.com')).statusCode).toBe(200);
      await queue.resume();
      expect((await mutation(proxied.url)).statusCode).toBe(403);
      expect((await mutation('https://evil.example')).statusCode).toBe(403);
      expect((await mutation('http://ops.example.com', 'ops.example.com')).statusCode).toBe(403);
      expect(await queue.isPaused()).toBe(false);
    } finally {
      await queue.resume();
    }
  });

  it("takes a public URL's origin, and refuses one with a path or another scheme", async ({ openPrefix }) => {
    expect(parsePublicUrl('https://Ops.Example.com:443/')).toBe('https://ops.example.com');
    expect(parsePublicUrl('http://10.0.0.5:8080')).toBe('http://10.0.0.5:8080');
    for (const bad of ['https://ops.example.com/dashboard', 'ftp://ops.example.com', 'ops.example.com', 'https://u:p@ops.example.com']) {
      expect(() => parsePublicUrl(bad), bad).toThrow(expect.objectContaining({ code: 'ERR_USAGE' }));
    }
    const prefix = openPrefix('dashboard-public-url');
    const cli = await runCli(['dashboard', '--port', '0', '--public-url', 'https://ops.example.com/dashboard'], {
      REDIS_URL,
      REALTY_PREFIX: prefix,
      LOG_LEVEL: 'silent',
      DASHBOARD_USER: 'ops',
      DASHBOARD_PASSWORD: 'x',
    });
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/^realty-batch: --public-url names where the page is served from/);
  });
});
