/**
 * The operator actions: every change made through the dashboard (Bull Board's retry, pause,
 * resume, clean of finished jobs, rate-limit release) recorded with its login, what was refused
 * never, and `/audit` listing them with the command line's, newest first, paged; over the real
 * HTTP server with real Redis, a real database and the built command line.
 */
import { userInfo } from 'node:os';
import { PassThrough } from 'node:stream';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { recordAction, type RecordedAction } from '../../../src/db/operator-actions.js';
import { ANONYMOUS, startDashboard, type DashboardOptions, type RunningDashboard } from '../../../src/dashboard/server.js';
import type { AuditPage } from '../../../src/ledger/history.js';
import { createLogger } from '../../../src/logger.js';
import { DEAL_JOB, dealJobId, type DealJobData } from '../../../src/queue/job-data.js';
import type { Keys } from '../../../src/redis/keys.js';
import { runCli } from '../../helpers/cli.js';
import { basic, call, type Answer } from '../../helpers/dashboard-batch.js';
import { ENGINES, openTestDatabase } from '../../helpers/database.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { waitFor } from '../../helpers/wait-for.js';

const USER = 'night-operator';
const PASSWORD = 'correct horse battery staple';
const AUTH = basic(USER, PASSWORD);
const FAILED_DEAL = 'NSK-2026-000501';
const WAITING_DEAL = 'NSK-2026-000502';

/** Every action recorded, oldest first. */
async function actions(db: Database): Promise<RecordedAction[]> {
  const rows = await db.kysely.selectFrom('operator_actions').selectAll().orderBy('id').execute();
  return rows.map((r) => ({
    id: Number(r.id),
    at: r.at,
    who: r.who,
    action: r.action,
    batch: r.batch,
    dealId: r.deal_id,
    detail: r.detail,
  }));
}

/** Waits for `count` actions (recorded once the answer is sent) and gives them. */
function recorded(db: Database, count: number): Promise<RecordedAction[]> {
  return waitFor(
    async () => {
      const all = await actions(db);
      return all.length >= count ? all : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 20, what: `${count} operator actions` },
  );
}

describe.each(ENGINES)("the dashboard records its operators' actions (%s)", (engine) => {
  const it = harness({ label: 'dashboard-audit', engine, redis: { maxRetriesPerRequest: null } });
  let store: UsedDatabase;
  let prefix: string;
  let redis: Redis;
  let keys: Keys;
  let queue: Queue<DealJobData>;
  let common: DashboardOptions;
  let dashboard: RunningDashboard;
  const started: RunningDashboard[] = [];
  const failedJob = dealJobId('night', FAILED_DEAL);
  const waitingJob = dealJobId('night', WAITING_DEAL);

  it.beforeEach(async ({ prefix: made, redis: client, keys: madeKeys, db }) => {
    prefix = made;
    redis = client;
    keys = madeKeys;
    store = db;
    queue = new Queue<DealJobData>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
    common = {
      redis,
      keys,
      db: store.db,
      host: '127.0.0.1',
      port: 0,
      credentials: { user: USER, password: PASSWORD },
      loginThrottle: { failures: 1000 },
    };
    dashboard = await startDashboard(common);
    started.push(dashboard);
  });
  afterEach(async () => {
    for (const d of started.splice(0)) await d.close();
    await queue?.close();
  });

  async function start(options: Partial<DashboardOptions>): Promise<RunningDashboard> {
    const d = await startDashboard({ ...common, ...options });
    started.push(d);
    return d;
  }

  /** A failed deal job (a failure of the machinery) and a waiting one, as the board lists them. */
  async function failedAndWaiting(): Promise<void> {
    await queue.add(DEAL_JOB, { batch: 'night', row: 1, dealId: FAILED_DEAL }, { jobId: failedJob });
    const worker = new Worker<DealJobData>(
      keys.queueName,
      () => Promise.reject(new Error('READONLY You cannot write against a read only replica.')),
      { connection: redis, prefix: keys.bullPrefix },
    );
    try {
      await waitFor(async () => (await queue.getJobState(failedJob)) === 'failed', {
        timeoutMs: 10_000,
        intervalMs: 20,
        what: 'the job to fail',
      });
    } finally {
      await worker.close();
    }
    await queue.add(DEAL_JOB, { batch: 'night', row: 2, dealId: WAITING_DEAL }, { jobId: waitingJob });
  }

  const put = (d: RunningDashboard, path: string, authorization: string | undefined = AUTH): Promise<Answer> =>
    call(`${d.url}/queues/api/queues/${keys.queueName}${path}`, { method: 'PUT', body: {}, ...(authorization && { authorization }) });

  it("records a retry, a pause and a resume through Bull Board's API with the login, the route and the job's batch and deal", async () => {
    await failedAndWaiting();
    expect((await put(dashboard, `/${failedJob}/retry`)).status).toBe(204);
    expect(await queue.getJobState(failedJob)).toBe('waiting');
    const [retry] = await recorded(store.db, 1);
    expect(retry).toEqual({
      id: expect.any(Number) as unknown as number,
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown as string,
      who: USER,
      action: 'PUT /queues/api/queues/:queueName/:jobId/retry',
      batch: 'night',
      dealId: FAILED_DEAL,
      detail: `queue ${keys.queueName}, job ${failedJob}`,
    });
    expect(Date.now() - Date.parse(retry!.at)).toBeLessThan(60_000);

    expect((await put(dashboard, '/pause')).status).toBe(200);
    expect(await queue.isPaused()).toBe(true);
    expect((await put(dashboard, '/resume')).status).toBe(200);
    expect(await queue.isPaused()).toBe(false);
    expect((await put(dashboard, '/retry/failed')).status).toBe(200);
    expect((await put(dashboard, '/rate-limit/release')).status).toBe(200);
    const all = await recorded(store.db, 5);
    expect(all.map((a) => [a.who, a.action, a.batch, a.dealId, a.detail])).toEqual([
      [USER, 'PUT /queues/api/queues/:queueName/:jobId/retry', 'night', FAILED_DEAL, `queue ${keys.queueName}, job ${failedJob}`],
      [USER, 'PUT /queues/api/queues/:queueName/pause', null, null, `queue ${keys.queueName}`],
      [USER, 'PUT /queues/api/queues/:queueName/resume', null, null, `queue ${keys.queueName}`],
      [USER, 'PUT /queues/api/queues/:queueName/retry/:queueStatus', null, null, `queue ${keys.queueName}, status failed`],
      [USER, 'PUT /queues/api/queues/:queueName/rate-limit/release', null, null, `queue ${keys.queueName}`],
    ]);
    // What was read is no action.
    for (const path of ['/queues/api/queues', `/queues/api/queues/${keys.queueName}/${failedJob}`, '/batches', '/audit', '/deals'])
      expect((await call(`${dashboard.url}${path}`, { authorization: AUTH })).status, path).toBe(200);
    expect((await put(dashboard, '/pause')).status).toBe(200);
    expect(await recorded(store.db, 6)).toHaveLength(6);
  });

  it('records nothing that was refused: credentials, another origin, read-only, actions that would lose a row, jobs that do not exist', async () => {
    await failedAndWaiting();
    const readOnly = await start({ readOnly: true });
    const refusals: Array<[string, Promise<Answer>, number]> = [
      ['without credentials', put(dashboard, '/pause', ''), 401],
      ['a wrong password', put(dashboard, '/pause', basic(USER, 'wrong')), 401],
      ['read-only pause', put(readOnly, '/pause'), 405],
      ['read-only retry', put(readOnly, `/${failedJob}/retry`), 405],
      ['clean waiting', put(dashboard, '/clean/waiting'), 405],
      ['remove a waiting job', put(dashboard, `/${waitingJob}/clean`), 409],
      ['empty the queue', put(dashboard, '/empty'), 405],
      ['a queue-wide rate limit', put(dashboard, '/rate-limit'), 405],
      ['retry a job that does not exist', put(dashboard, `/${dealJobId('night', 'NSK-2026-999999')}/retry`), 404],
      [
        'a queue that does not exist',
        call(`${dashboard.url}/queues/api/queues/other/pause`, { method: 'PUT', body: {}, authorization: AUTH }),
        404,
      ],
      ['a route that does not exist', call(`${dashboard.url}/deals`, { method: 'POST', body: {}, authorization: AUTH }), 404],
    ];
    for (const [what, answer, status] of refusals) expect((await answer).status, what).toBe(status);
    const foreign = await fetch(`${dashboard.url}/queues/api/queues/${keys.queueName}/pause`, {
      method: 'PUT',
      headers: { authorization: AUTH, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
    expect(await queue.isPaused()).toBe(false);
    expect(await queue.getJobState(waitingJob)).toBe('waiting');

    // One action let through, from the page's own origin: the only one recorded.
    const own = await fetch(`${dashboard.url}/queues/api/queues/${keys.queueName}/${failedJob}/clean`, {
      method: 'PUT',
      headers: { authorization: AUTH, origin: dashboard.url, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(own.status).toBe(204);
    const all = await recorded(store.db, 1);
    expect(all.map((a) => [a.who, a.action, a.dealId])).toEqual([[USER, 'PUT /queues/api/queues/:queueName/:jobId/clean', FAILED_DEAL]]);
  });

  it('records the actions of a dashboard without credentials as anonymous', async () => {
    const open = await start({ credentials: undefined });
    expect((await put(open, '/pause', '')).status).toBe(200);
    const [action] = await recorded(store.db, 1);
    expect(action).toMatchObject({ who: ANONYMOUS, action: 'PUT /queues/api/queues/:queueName/pause' });
  });

  it('keeps the answer and logs when the action cannot be recorded', async () => {
    const lost = await openTestDatabase(engine);
    const log = new PassThrough();
    let logged = '';
    log.on('data', (chunk: Buffer) => (logged += chunk.toString()));
    const broken = await start({ db: lost.db, logger: createLogger({ level: 'error', destination: log }) });
    try {
      await lost.db.close();
      const answer = await put(broken, '/pause');
      expect(answer.status).toBe(200);
      expect(await queue.isPaused()).toBe(true);
      await waitFor(() => logged.includes('a dashboard action could not be recorded'), {
        timeoutMs: 10_000,
        intervalMs: 20,
        what: 'the failure to be logged',
      });
      expect(logged).toContain('"action":"PUT /queues/api/queues/:queueName/pause"');
    } finally {
      await lost.drop();
    }
  });

  it('lists the actions on /audit, newest first with who, when and what, escaped, paged, of one deal, and as JSON', async () => {
    for (let i = 1; i <= 104; i++) await recordAction(store.db, { who: 'alice', action: 'retry', batch: `b${i}`, detail: `try ${i}` });
    await recordAction(store.db, {
      who: '<b>mallory</b>',
      action: 'ledger --resolve',
      batch: 'night',
      dealId: '<script>alert(1)</script>',
      detail: 'docflow <img src=x> named',
    });
    const page = await call(`${dashboard.url}/audit`, { authorization: AUTH });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).not.toMatch(/<script|<img|<b>/);
    expect(page.text).toContain('&#60;b&#62;mallory&#60;/b&#62;');
    expect(page.text).toContain('href="/deals?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E"');
    expect(page.text).toContain('docflow &#60;img src=x&#62; named');
    const rows = [...page.text.matchAll(/<tr>\n<td class="muted">(\d+)<\/td>/g)].map((m) => Number(m[1]));
    expect(rows).toHaveLength(100);
    expect(rows).toEqual([...rows].sort((a, b) => b - a));
    const older = /<a href="\/audit\?before=(\d+)">Older actions<\/a>/.exec(page.text);
    expect(Number(older?.[1])).toBe(rows.at(-1));

    const first = JSON.parse((await call(`${dashboard.url}/audit?format=json`, { authorization: AUTH })).text) as AuditPage;
    expect(first.actions).toHaveLength(100);
    expect(first.actions[0]).toMatchObject({ who: '<b>mallory</b>', action: 'ledger --resolve', dealId: '<script>alert(1)</script>' });
    expect(first.actions[1]).toMatchObject({ who: 'alice', action: 'retry', batch: 'b104', detail: 'try 104' });
    expect(first.next).toBe(first.actions[99]!.id);
    const second = JSON.parse(
      (await call(`${dashboard.url}/audit?before=${first.next}&format=json`, { authorization: AUTH })).text,
    ) as AuditPage;
    expect(second.actions.map((a) => a.detail)).toEqual(['try 5', 'try 4', 'try 3', 'try 2', 'try 1']);
    expect(second.next).toBeNull();
    const last = await call(`${dashboard.url}/audit?before=${first.next}`, { authorization: AUTH });
    expect(last.text).toContain('No older action.');
    expect(last.text).toContain('<a href="/audit">Newest actions</a>');

    const ofDeal = JSON.parse(
      (await call(`${dashboard.url}/audit?dealId=${encodeURIComponent('<script>alert(1)</script>')}&format=json`, { authorization: AUTH }))
        .text,
    ) as AuditPage;
    expect(ofDeal.actions.map((a) => a.who)).toEqual(['<b>mallory</b>']);

    for (const bad of ['/audit?before=x', '/audit?before=0', '/audit?before=-1', `/audit?dealId=${'x'.repeat(201)}`, '/audit?format=xml']) {
      const answer = await call(`${dashboard.url}${bad}`, { authorization: AUTH });
      expect(answer.status, bad).toBe(400);
      expect(answer.text.trim().split('\n'), bad).toHaveLength(1);
      expect(answer.text).not.toMatch(/xxxx|xml/);
    }
  });

  it("shows the command line's actions with --operator, else the OS user, beside the page's own", async () => {
    const env = { REDIS_URL, REALTY_PREFIX: prefix, LOG_LEVEL: 'silent', DATABASE_URL: store.url };
    const named = await runCli(['track', '--reset-cursor', '--operator', 'alice'], env);
    expect(named.code, named.stderr).toBe(0);
    const unnamed = await runCli(['track', '--reset-cursor'], env);
    expect(unnamed.code, unnamed.stderr).toBe(0);
    expect((await put(dashboard, '/pause')).status).toBe(200);
    await recorded(store.db, 3);
    const { actions: listed } = JSON.parse((await call(`${dashboard.url}/audit?format=json`, { authorization: AUTH })).text) as AuditPage;
    expect(listed.map((a) => [a.who, a.action])).toEqual([
      [USER, 'PUT /queues/api/queues/:queueName/pause'],
      [userInfo().username, 'track --reset-cursor'],
      ['alice', 'track --reset-cursor'],
    ]);
    const page = await call(`${dashboard.url}/audit`, { authorization: AUTH });
    expect(page.text).toContain('<td>alice</td>');
    expect(page.text).toContain('<code>track --reset-cursor</code>');
  });
});
