/**
 * DNS rebinding: another site points its own name at this machine, and its page's requests
 * reach the dashboard with `Host: its.name`. Without credentials the page answers only under
 * a loopback name; with a public URL only under that URL's host name (or a loopback one). And
 * the files with personal data are never kept by a browser or a proxy.
 */
import { Queue } from 'bullmq';
import { request } from 'undici';
import { describe, expect, afterAll } from 'vitest';
import { hostNameOf, LOOPBACK_ONLY, notPublicHost } from '../../../src/dashboard/security.js';
import { startDashboard, type RunningDashboard } from '../../../src/dashboard/server.js';
import { basic, batchHarness, BY_SUGGEST, INVALID, runDashboardBatch, type DashboardBatch } from '../../helpers/dashboard-batch.js';

const credentials = { user: 'ops', password: 'the night shift' };
const AUTH = basic(credentials.user, credentials.password);
const ATTACKER = 'attacker.example';

const it = batchHarness({ label: 'dashboard-host' });

describe('the operations page answers only under the names it is served at', () => {
  let night: DashboardBatch;
  let open: RunningDashboard;
  let proxied: RunningDashboard;
  let guarded: RunningDashboard;
  let queue: Queue;

  it.beforeAll(async ({ redis, keys, prefix, db, dir, sandbox, profile }) => {
    night = await runDashboardBatch({ redis, keys, prefix, db, dir, sandbox, profile }, [BY_SUGGEST, INVALID]);
    const common = { redis: night.redis, keys: night.keys, db: night.db, host: '127.0.0.1', port: 0 };
    open = await startDashboard(common);
    proxied = await startDashboard({ ...common, credentials, publicOrigin: 'https://ops.example.com' });
    guarded = await startDashboard({ ...common, credentials });
    queue = new Queue(night.keys.queueName, { connection: night.redis, prefix: night.keys.bullPrefix });
  });
  afterAll(async () => {
    await queue?.close();
    await open?.close();
    await proxied?.close();
    await guarded?.close();
  });

  const operatorActions = async (): Promise<number> =>
    Number(
      (
        await night.db.kysely
          .selectFrom('operator_actions')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  /** One request over HTTP with the `Host` a rebinding page's browser sends. */
  async function send(d: RunningDashboard, path: string, host: string, method: 'GET' | 'PUT' = 'GET', authorization?: string) {
    const answer = await request(`${d.url}${path}`, {
      method,
      headers: { host, ...(authorization && { authorization }), ...(method === 'PUT' && { 'content-type': 'application/json' }) },
      ...(method === 'PUT' && { body: '{}' }),
    });
    return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
  }

  it('without credentials, refuses a foreign Host with 421 and one sentence: no attention file, no pause, resume or retry', async () => {
    const before = await operatorActions();
    const port = new URL(open.url).port;
    for (const host of [ATTACKER, `${ATTACKER}:${port}`, `localhost.${ATTACKER}:${port}`, `127.0.0.1.nip.io:${port}`, '']) {
      for (const [method, path] of [
        ['GET', '/batches/night/attention.csv'],
        ['GET', '/batches/night/results.csv'],
        ['GET', '/batches'],
        ['GET', '/queues/api/queues'],
        ['GET', '/metrics'],
        ['PUT', '/queues/api/queues/deals/pause'],
        ['PUT', '/queues/api/queues/deals/resume'],
        ['PUT', '/queues/api/queues/deals/retry/failed'],
      ] as const) {
        const answer = await send(open, path, host, method);
        expect(answer.status, `${method} ${path} as ${host}`).toBe(421);
        expect(answer.text).toBe(`${LOOPBACK_ONLY}\n`);
        expect(answer.text).not.toContain(BY_SUGGEST);
      }
    }
    expect(await queue.isPaused()).toBe(false);
    expect(await operatorActions()).toBe(before);
  });

  it('without credentials, answers under localhost, 127.0.0.1 and [::1], with any port', async () => {
    const port = new URL(open.url).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST', '127.0.0.1', '[::1]:1']) {
      const answer = await send(open, '/batches', host);
      expect(answer.status, host).toBe(200);
      expect(answer.text).toContain('night');
    }
    try {
      expect((await send(open, '/queues/api/queues/deals/pause', `localhost:${port}`, 'PUT')).status).toBe(200);
      expect(await queue.isPaused()).toBe(true);
    } finally {
      await queue.resume();
    }
  });

  it('with a public URL, answers only under its host name (any port) or a loopback name, credentials or not', async () => {
    for (const host of ['ops.example.com', 'ops.example.com:443', 'OPS.example.com:8443', 'localhost:3000', '127.0.0.1']) {
      expect((await send(proxied, '/batches', host, 'GET', AUTH)).status, host).toBe(200);
    }
    for (const host of [ATTACKER, 'ops.example.com.attacker.example', 'example.com', '10.0.0.5:3000']) {
      const answer = await send(proxied, '/batches/night/attention.csv', host, 'GET', AUTH);
      expect(answer.status, host).toBe(421);
      expect(answer.text).toBe(`${notPublicHost('ops.example.com')}\n`);
    }
    expect((await send(proxied, '/queues/api/queues/deals/pause', ATTACKER, 'PUT', AUTH)).status).toBe(421);
    expect(await queue.isPaused()).toBe(false);
  });

  it('with credentials and no public URL, answers under any name (a rebinding page has not the credentials), and asks them first', async () => {
    expect((await send(guarded, '/batches', 'dashboard.internal:3000', 'GET', AUTH)).status).toBe(200);
    expect((await send(guarded, '/batches', ATTACKER)).status).toBe(401);
  });

  it('sends the attention and results files with Cache-Control: no-store', async () => {
    for (const path of ['/batches/night/attention.csv', '/batches/night/results.csv', '/batches/night/results.csv?format=jsonl']) {
      const answer = await send(open, path, 'localhost');
      expect(answer.status, path).toBe(200);
      expect(answer.headers['cache-control'], path).toBe('no-store');
      expect(answer.headers['content-disposition'], path).toMatch(/^attachment; /);
    }
  });

  it("reads a Host header's name: lower case, without the port, IPv6 in brackets; none from what is no host", () => {
    expect(hostNameOf('LocalHost:3000')).toBe('localhost');
    expect(hostNameOf('[::1]:3000')).toBe('[::1]');
    expect(hostNameOf('127.0.0.1')).toBe('127.0.0.1');
    for (const bad of [undefined, '', 'a b', 'evil.example/x', 'user@localhost', 'localhost:port'])
      expect(hostNameOf(bad), String(bad)).toBeUndefined();
  });
});
