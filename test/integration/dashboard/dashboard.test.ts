import { spawn } from 'node:child_process';
import { rename } from 'node:fs/promises';
import { Queue } from 'bullmq';
import { parse } from 'csv-parse/sync';
import { describe, expect, afterAll } from 'vitest';
import { credentialsMatch, resolveAccess } from '../../../src/dashboard/auth.js';
import { escapeHtml } from '../../../src/dashboard/batches-page.js';
import { MASK, maskJobData, maskReturnValue } from '../../../src/dashboard/mask.js';
import { histogramSamples, histogramText, parseFleetCounters } from '../../../src/dashboard/metrics.js';
import { startDashboard, type RunningDashboard } from '../../../src/dashboard/server.js';
import { createMetricsRecorder, DURATION_BUCKETS } from '../../../src/metrics/recorder.js';
import { DEAL_JOB, dealJobId, type DealJobData } from '../../../src/queue/job-data.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import {
  basic,
  batchHarness,
  call,
  CRIMEA,
  EGRON,
  INVALID,
  BY_SUGGEST,
  WITH_NUMBER,
  runDashboardBatch,
  sampleDeal,
  type DashboardBatch,
} from '../../helpers/dashboard-batch.js';
import { harness, type Harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';

const USER = 'ops';
const PASSWORD = 'correct horse battery staple';
const AUTH = basic(USER, PASSWORD);

/** The batch the dashboard over HTTP reads, once for the file. */
const it = batchHarness({ label: 'dashboard', sandbox: { egronRegions: [CRIMEA] } });
/** The fleet hash a recorder writes: a prefix and a client of the test's own. */
const fleet = harness({ label: 'recorder', engine: 'none' });
/** The command's prefix, once for the file; a database of each test's own. */
const command = harness({ per: 'file', each: ['db'], label: 'dashboard-cli' });

/** Prometheus text: `name{labels} value` lines as [name, labels, value]. */
function samples(text: string): Array<{ name: string; labels: Record<string, string>; value: number }> {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

describe('maskJobData: what Bull Board shows of a deal job', () => {
  const spouses = sampleDeal('NSK-2026-000124');
  const data: DealJobData = { batch: 'night', row: 3, dealId: spouses.dealId, deal: spouses };

  it('keeps the keys and the property, and hides every personal field of every owner', () => {
    const masked = maskJobData(data) as { deal: Record<string, unknown> } & Record<string, unknown>;
    const text = JSON.stringify(masked);
    expect(spouses.owners).toHaveLength(2);
    for (const owner of spouses.owners) {
      const personal = [
        owner.surname,
        owner.name,
        owner.patronymic,
        owner.snils,
        owner.doc.number,
        owner.doc.series,
        owner.doc.issuerName,
        owner.doc.issuerCode,
        owner.birthDate,
        owner.birthPlace,
      ];
      for (const value of personal.filter((v): v is string => Boolean(v))) expect(text).not.toContain(value);
      // SNILS and passport however they are written: no run of their digits survives.
      expect(text.replace(/\D/g, '')).not.toContain(owner.snils);
    }
    expect(masked).toMatchObject({ batch: 'night', row: 3, dealId: spouses.dealId });
    expect(masked.deal).toMatchObject({ dealId: spouses.dealId, region: spouses.region, house: spouses.house, owners: [MASK, MASK] });
    expect(text).not.toMatch(/surname|snils|passport|birth|address/i);
  });

  it('shows any key it does not know as the mask, and leaves data that is not an object alone unless it is text', () => {
    expect(maskJobData({ batch: 'b', row: 1, dealId: 'D', note: 'Иванов Иван' })).toEqual({ batch: 'b', row: 1, dealId: 'D', note: MASK });
    expect(maskJobData({ deal: 'Иванов' })).toEqual({ deal: MASK });
    expect(maskJobData('Иванов')).toBe(MASK);
    expect(maskJobData(null)).toBeNull();
  });

  it('keeps an outcome record as it is and masks what is not one of its fields', () => {
    const record = { row: 1, dealId: 'D', outcome: 'queued', attempts: 1, docflowId: 'x', finishedAt: 't' };
    expect(maskReturnValue({ ...record, extra: 'Иванов' })).toEqual({ ...record, extra: MASK });
  });
});

describe('dashboard access', () => {
  const expected = { user: USER, password: PASSWORD };

  it('accepts exactly the configured user and password, and nothing else', () => {
    expect(credentialsMatch(AUTH, expected)).toBe(true);
    expect(credentialsMatch(basic(USER, `${PASSWORD}x`), expected)).toBe(false);
    expect(credentialsMatch(basic('other', PASSWORD), expected)).toBe(false);
    expect(credentialsMatch(basic(USER, ''), expected)).toBe(false);
    expect(credentialsMatch(`Bearer ${PASSWORD}`, expected)).toBe(false);
    expect(credentialsMatch(`Basic ${Buffer.from(`${USER}${PASSWORD}`).toString('base64')}`, expected)).toBe(false);
    expect(credentialsMatch(undefined, expected)).toBe(false);
    expect(credentialsMatch(basic('ops', 'pa:ss'), { user: 'ops', password: 'pa:ss' })).toBe(true);
  });

  it('refuses to run without credentials unless --no-auth, which binds 127.0.0.1 only', () => {
    expect(() => resolveAccess({ auth: true })).toThrow(/DASHBOARD_USER and DASHBOARD_PASSWORD/);
    expect(() => resolveAccess({ auth: true, user: 'u' })).toThrow(expect.objectContaining({ code: 'ERR_CONFIG' }));
    expect(resolveAccess({ auth: true, user: 'u', password: 'p', host: '0.0.0.0' })).toEqual({
      host: '0.0.0.0',
      credentials: { user: 'u', password: 'p' },
    });
    expect(resolveAccess({ auth: false })).toEqual({ host: '127.0.0.1' });
    expect(() => resolveAccess({ auth: false, host: '0.0.0.0' })).toThrow(expect.objectContaining({ code: 'ERR_USAGE' }));
  });

  it('escapes every character that could open markup', () => {
    expect(escapeHtml(`<script>"a" & 'b'</script>`)).toBe('&#60;script&#62;&#34;a&#34; &#38; &#39;b&#39;&#60;/script&#62;');
  });
});

describe('metrics from the fleet hash', () => {
  it('reads outcomes, calls and durations, and cumulates the stored buckets up to +Inf', () => {
    const counters = parseFleetCounters({
      'outcome|encumbrance_request|queued': '3',
      'outcome|cessation_encumbrance_request|queued': '2',
      'call|suggest|200': '2',
      'call|docflows|501': '4',
      'duration_bucket|suggest|0.005': '1',
      'duration_bucket|suggest|0.1': '1',
      'duration_bucket|suggest|+Inf': '1',
      'duration_sum|suggest': '31.2',
      'duration_count|suggest': '3',
      'breaker|open': '1',
      'something|else': '9',
    });
    expect(counters.outcomes).toEqual([
      { type: 'encumbrance_request', outcome: 'queued', count: 3 },
      { type: 'cessation_encumbrance_request', outcome: 'queued', count: 2 },
    ]);
    expect(counters.breaker.get('open')).toBe(1);
    expect(counters.calls).toEqual(expect.arrayContaining([{ endpoint: 'docflows', status: '501', count: 4 }]));
    const out = histogramSamples('h', counters.durations);
    const buckets = out.filter((s) => s.metricName === 'h_bucket').map((s) => [String(s.labels.le), s.value]);
    expect(buckets).toHaveLength(DURATION_BUCKETS.length + 1);
    expect(buckets).toContainEqual(['0.005', 1]);
    expect(buckets).toContainEqual(['0.05', 1]);
    expect(buckets).toContainEqual(['0.1', 2]);
    expect(buckets).toContainEqual(['30', 2]);
    expect(buckets.at(-1)).toEqual(['+Inf', 3]);
    expect(out.find((s) => s.metricName === 'h_count')?.value).toBe(3);
    expect(out.find((s) => s.metricName === 'h_sum')?.value).toBeCloseTo(31.2);
  });

  fleet("counts a worker's calls into the fleet hash: per status, per duration bucket, sums and counts", async ({ redis, keys }) => {
    const key = keys.metrics;
    const recorder = createMetricsRecorder(redis, key, 60_000);
    recorder.call('suggest', 200, 4);
    recorder.call('suggest', 200, 5);
    recorder.call('suggest', 200, 5.5);
    recorder.call('suggest', 501, 40_000);
    recorder.call('docflows', 0, 30_000);
    recorder.outcome('queued', 'encumbrance_request');
    recorder.outcome('invalid', 'object_request');
    // The buckets' edges: 0 s, a bound itself (5 ms, 30 s) and just past one (5.1 ms, 30.1 s).
    for (const ms of [0, 5, 5.1, 30_000, 30_100]) recorder.call('edges', 200, ms);
    await recorder.close();
    const stored = await redis.hgetall(key);
    const edges = Object.fromEntries(Object.entries(stored).filter(([field]) => field.includes('|edges')));
    expect(edges).toMatchObject({
      'duration_bucket|edges|0.005': '2',
      'duration_bucket|edges|0.01': '1',
      'duration_bucket|edges|30': '1',
      'duration_bucket|edges|+Inf': '1',
      'duration_count|edges': '5',
    });
    expect(Object.keys(edges).filter((field) => field.startsWith('duration_bucket'))).toHaveLength(4);
    const { 'duration_sum|suggest': sum, ...counts } = Object.fromEntries(
      Object.entries(stored).filter(([field]) => !field.includes('|edges')),
    );
    expect(Number(sum)).toBeCloseTo(40.0145);
    expect(counts).toEqual({
      'call|suggest|200': '3',
      'call|suggest|501': '1',
      'call|docflows|0': '1',
      'duration_bucket|suggest|0.005': '2',
      'duration_bucket|suggest|0.01': '1',
      'duration_bucket|suggest|+Inf': '1',
      'duration_bucket|docflows|30': '1',
      'duration_count|suggest': '4',
      'duration_count|docflows': '1',
      'duration_sum|docflows': '30',
      'outcome|encumbrance_request|queued': '1',
      'outcome|object_request|invalid': '1',
    });
  });

  it('writes the histogram in the text format, with label values escaped', () => {
    const durations = new Map([['a"b', { buckets: new Map([['+Inf', 2]]), sum: 70, count: 2 }]]);
    const text = histogramText('h', 'durations', durations);
    expect(text.split('\n').slice(0, 3)).toEqual(['# HELP h durations', '# TYPE h histogram', 'h_bucket{endpoint="a\\"b",le="0.005"} 0']);
    expect(text).toContain('h_bucket{endpoint="a\\"b",le="+Inf"} 2\nh_sum{endpoint="a\\"b"} 70\nh_count{endpoint="a\\"b"} 2\n');
    expect(samples(text)).toHaveLength(DURATION_BUCKETS.length + 3);
  });
});

describe('the dashboard over HTTP', () => {
  let night: DashboardBatch;
  let dashboard: RunningDashboard;
  let readOnly: RunningDashboard;
  /** `dashboard --lang ru`: the files it hands out for a person are in Russian. */
  let russian: RunningDashboard;
  /** A waiting job that still holds its deal, as one does before a worker takes it. */
  const WAITING = 'EKB-2026-000311';
  const waitingJobId = dealJobId('later', WAITING);
  /** A deal whose claim Redis refuses at every try: a failure of the machinery, the one failed job. */
  const REFUSED = 'EKB-2026-000312';

  it.beforeAll(async ({ redis, keys, prefix, db, dir, sandbox, profile }) => {
    night = await runDashboardBatch(
      { redis, keys, prefix, db, dir, sandbox, profile },
      [BY_SUGGEST, WITH_NUMBER, INVALID, EGRON, REFUSED],
      'night',
      { refusedClaims: [REFUSED] },
    );
    const queue = new Queue<DealJobData>(night.keys.queueName, { connection: night.redis, prefix: night.keys.bullPrefix });
    await queue.add(DEAL_JOB, { batch: 'later', row: 1, dealId: WAITING, deal: sampleDeal(WAITING) }, { jobId: waitingJobId });
    await queue.close();
    // Every route is tried with wrong credentials below, more than the 10 that lock an address out
    // (test/dashboard-login-throttle.test.ts): this suite's dashboards allow more.
    const common = {
      redis: night.redis,
      keys: night.keys,
      db: night.db,
      host: '127.0.0.1',
      port: 0,
      credentials: { user: USER, password: PASSWORD },
      loginThrottle: { failures: 1000 },
    };
    dashboard = await startDashboard(common);
    readOnly = await startDashboard({ ...common, readOnly: true });
    russian = await startDashboard({ ...common, lang: 'ru' });
  });
  afterAll(async () => {
    await dashboard?.close();
    await readOnly?.close();
    await russian?.close();
  });

  const routes = [
    '/',
    '/batches',
    '/metrics',
    '/queues',
    '/queues/api/queues',
    '/batches/night/results.csv',
    '/batches/night/attention.csv',
  ];

  it('answers 401 with a Basic challenge on every route without credentials or with wrong ones', async () => {
    for (const path of routes) {
      for (const authorization of [undefined, basic(USER, 'wrong'), basic('root', PASSWORD)]) {
        const answer = await call(`${dashboard.url}${path}`, authorization ? { authorization } : {});
        expect(answer.status, `${path} ${authorization ?? 'without credentials'}`).toBe(401);
        expect(answer.headers.get('www-authenticate')).toBe('Basic realm="realty-batch"');
        expect(answer.text).not.toContain('night');
      }
    }
  });

  it('serves every route with the credentials, and sends / to the batches', async () => {
    const root = await call(`${dashboard.url}/`, { authorization: AUTH });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/batches');
    for (const path of routes.slice(1)) expect((await call(`${dashboard.url}${path}`, { authorization: AUTH })).status, path).toBe(200);
  });

  it('lists the batch with its counts per outcome, its load state and its file links, and links to Bull Board', async () => {
    const page = await call(`${dashboard.url}/batches`, { authorization: AUTH });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('<code>night</code>');
    expect(page.text).toMatch(/queued&nbsp;2/);
    expect(page.text).toMatch(/invalid&nbsp;1/);
    expect(page.text).toMatch(/unavailable&nbsp;1/);
    expect(page.text).toMatch(/failed&nbsp;1/);
    expect(page.text).toContain('loaded, <span class="done">done</span>');
    expect(page.text).toContain('href="/batches/night/results.csv"');
    expect(page.text).toContain('href="/batches/night/attention.csv"');
    expect(page.text).toContain('href="/queues"');
    expect(page.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    const board = await call(`${dashboard.url}/queues`, { authorization: AUTH });
    expect(board.text).toContain('"miscLinks":[{"text":"Batches and results files","url":"/batches"}]');
  });

  it('downloads the results as CSV and JSON Lines, one line per row', async () => {
    const csv = await call(`${dashboard.url}/batches/night/results.csv`, { authorization: AUTH });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="night.results.csv"');
    const rows = parse(csv.text, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((r) => [r.dealId, r.outcome])).toEqual([
      [BY_SUGGEST, 'queued'],
      [WITH_NUMBER, 'queued'],
      [INVALID, 'invalid'],
      [EGRON, 'unavailable'],
      [REFUSED, 'failed'],
    ]);
    const jsonl = await call(`${dashboard.url}/batches/night/results.csv?format=jsonl`, { authorization: AUTH });
    expect(jsonl.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(jsonl.headers.get('content-disposition')).toBe('attachment; filename="night.results.jsonl"');
    expect(
      jsonl.text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { outcome: string }).outcome),
    ).toEqual(['queued', 'queued', 'invalid', 'unavailable', 'failed']);
    const excel = await call(`${dashboard.url}/batches/night/results.csv?excel=1`, { authorization: AUTH });
    expect(excel.bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(excel.text).toMatch(/^\uFEFFrow;dealId;outcome;/);
  });

  it('hands out the attention file and the results for Excel in Russian under --lang ru, the plain results in English', async () => {
    const attention = await call(`${russian.url}/batches/night/attention.csv`, { authorization: AUTH });
    expect(attention.status).toBe(200);
    expect(attention.text).toMatch(/^\uFEFF№ строки;Результат;Что сделать;Ошибки;/);
    const excel = await call(`${russian.url}/batches/night/results.csv?excel=1`, { authorization: AUTH });
    expect(excel.text).toMatch(/^\uFEFF№ строки;ID сделки;Результат;/);
    const plain = await call(`${russian.url}/batches/night/results.csv`, { authorization: AUTH });
    expect(plain.text).toMatch(/^row,dealId,outcome,/);
  });

  it('downloads the attention file in the input columns, and answers 409 when the input is gone', async () => {
    const answer = await call(`${dashboard.url}/batches/night/attention.csv`, { authorization: AUTH });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(answer.headers.get('content-disposition')).toBe('attachment; filename="night.attention.csv"');
    // In the form Russian Excel opens, as the command line writes it.
    expect(answer.text).toMatch(/^\uFEFFrow;outcome;hint;errors;/);
    const rows = parse(answer.text, { columns: true, bom: true, delimiter: ';' }) as Array<Record<string, string>>;
    expect(rows.map((r) => [r.dealId, r.outcome])).toEqual([
      [INVALID, 'invalid'],
      [EGRON, 'unavailable'],
      [REFUSED, 'failed'],
    ]);
    expect(rows[0]).toHaveProperty('ownerSurname');
    expect(rows[1]!.hint).not.toBe('');

    await rename(night.file, `${night.file}.moved`);
    try {
      const gone = await call(`${dashboard.url}/batches/night/attention.csv`, { authorization: AUTH });
      expect(gone.status).toBe(409);
      expect(gone.text.trim().split('\n')).toHaveLength(1);
      expect(gone.text).toMatch(/^The input of batch night .* cannot be read any more/);
    } finally {
      await rename(`${night.file}.moved`, night.file);
    }
  });

  it("serves Bull Board's page and its styles with no reference to any host but its own", async () => {
    const page = await call(`${dashboard.url}/queues`, { authorization: AUTH });
    expect(page.status).toBe(200);
    // What the page loads by itself: its links and scripts, and what its styles import.
    const loaded = [...page.text.matchAll(/<(?:link|script)\b[^>]*\b(?:href|src)="([^"]*)"/g)].map((m) => m[1]!);
    const styles = loaded.filter((href) => /\.css(?:\?|$)/.test(href));
    expect(styles.length).toBeGreaterThan(0);
    const texts = [page.text];
    for (const href of styles) {
      const css = await call(new URL(href, `${dashboard.url}/queues/`).href, { authorization: AUTH });
      expect(css.status, href).toBe(200);
      texts.push(css.text);
    }
    // Bull Board's own page links Google Fonts: taken out, the system's fonts stand in.
    expect(page.text).not.toMatch(/fonts\.googleapis|fonts\.gstatic/);
    for (const href of loaded) expect(new URL(href, `${dashboard.url}/queues/`).origin, href).toBe(dashboard.url);
    for (const text of texts) {
      // Any absolute or protocol-relative address in an attribute, a url() or an @import.
      const addresses = [
        ...text.matchAll(/(?:(?:href|src|action)=["']?|url\(\s*["']?|@import\s+["'])((?:[a-z][\w+.-]*:)?\/\/[^"')\s]*)/gi),
      ];
      expect(addresses.map((m) => m[1])).toEqual([]);
    }
  });

  it('answers 404 for an id that is not a batch id and for a batch that is not in Redis', async () => {
    for (const path of [
      '/batches/..%2Fetc/results.csv',
      '/batches/-x/results.csv',
      '/batches/nope/results.csv',
      '/batches/nope/attention.csv',
    ]) {
      const answer = await call(`${dashboard.url}${path}`, { authorization: AUTH });
      expect(answer.status, path).toBe(404);
    }
  });

  it('shows a job that still holds its deal with the owners masked, through Bull Board', async () => {
    const answer = await call(`${dashboard.url}/queues/api/queues/deals/${waitingJobId}`, { authorization: AUTH });
    expect(answer.status).toBe(200);
    const { job } = JSON.parse(answer.text) as { job: { data: { deal: Record<string, unknown> }; name: string } };
    const deal = sampleDeal(WAITING);
    expect(job.data.deal).toMatchObject({ dealId: WAITING, region: deal.region, house: deal.house, owners: deal.owners.map(() => MASK) });
    for (const owner of deal.owners) {
      expect(answer.text).not.toContain(owner.surname);
      expect(answer.text).not.toContain(owner.doc.number);
      expect(answer.text.replace(/\D/g, '')).not.toContain(owner.snils);
    }
    expect(job.name).toBe(`deal ${WAITING} (batch later, row 1)`);
  });

  it('lists the failed jobs of the deals queue through Bull Board: failures of the machinery, not rows that reached their outcome', async () => {
    const answer = await call(`${dashboard.url}/queues/api/queues?activeQueue=deals&status=failed&page=1&jobsPerPage=10`, {
      authorization: AUTH,
    });
    const { queues } = JSON.parse(answer.text) as {
      queues: Array<{
        name: string;
        counts: Record<string, number>;
        jobs: Array<{ id: string; failedReason: string }>;
        readOnlyMode: boolean;
      }>;
    };
    expect(queues.map((q) => q.name)).toEqual(['deals']);
    expect(queues[0]!.counts).toMatchObject({ failed: 1, completed: 3, waiting: 1 });
    expect(queues[0]!.jobs.map((j) => j.id)).toEqual([dealJobId('night', REFUSED)]);
    expect(queues[0]!.jobs[0]!.failedReason).toMatch(/^READONLY/);
    expect(queues[0]!.readOnlyMode).toBe(false);
    // The unavailable row reached its outcome: its job is completed, its record the job's return value.
    const unavailable = await call(`${dashboard.url}/queues/api/queues/deals/${dealJobId('night', EGRON)}`, { authorization: AUTH });
    const { job } = JSON.parse(unavailable.text) as { job: { returnValue: Record<string, unknown>; failedReason?: string } };
    expect(job.returnValue).toMatchObject({
      row: 4,
      dealId: EGRON,
      outcome: 'unavailable',
      httpStatus: 501,
      errorCode: 'egronUnavailable',
    });
  });

  it('with --read-only, says so to the page and refuses retry, clean and pause', async () => {
    const list = await call(`${readOnly.url}/queues/api/queues`, { authorization: AUTH });
    expect((JSON.parse(list.text) as { queues: Array<{ readOnlyMode: boolean; allowRetries: boolean }> }).queues[0]).toMatchObject({
      readOnlyMode: true,
      allowRetries: false,
    });
    const failedJob = dealJobId('night', REFUSED);
    for (const [method, path] of [
      ['PUT', '/queues/api/queues/deals/retry/failed'],
      ['PUT', `/queues/api/queues/deals/${failedJob}/retry`],
      ['PUT', '/queues/api/queues/deals/clean/failed'],
      ['PUT', '/queues/api/queues/deals/pause'],
    ] as const) {
      const answer = await call(`${readOnly.url}${path}`, { method, authorization: AUTH, body: {} });
      expect(answer.status, path).toBe(405);
    }
    expect(await night.redis.zscore(`${night.keys.bullPrefix}:deals:failed`, failedJob)).not.toBeNull();
  });

  it("never lets the page write a job's data, add jobs, or empty the queue, even when not read-only", async () => {
    for (const [method, path, body] of [
      ['PATCH', `/queues/api/queues/deals/${waitingJobId}/update-data`, { jobData: { deal: { dealId: WAITING } } }],
      ['POST', '/queues/api/queues/deals/add', { name: 'deal', data: {} }],
      ['PUT', '/queues/api/queues/deals/empty', {}],
      ['PUT', '/queues/api/queues/deals/obliterate', {}],
    ] as const) {
      const answer = await call(`${dashboard.url}${path}`, { method, authorization: AUTH, body });
      expect(answer.status, path).toBe(405);
    }
    const queue = new Queue<DealJobData>(night.keys.queueName, { connection: night.redis, prefix: night.keys.bullPrefix });
    try {
      const job = await queue.getJob(waitingJobId);
      expect(job?.data.deal?.owners[0]!.surname).toBe(sampleDeal(WAITING).owners[0]!.surname);
    } finally {
      await queue.close();
    }
  });

  it('exposes the four metric families with the batch figures, and the process metrics', async () => {
    const answer = await call(`${dashboard.url}/metrics`, { authorization: AUTH });
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(answer.text).toContain('# TYPE realty_deals_finished_total counter');
    expect(answer.text).toContain('# TYPE realty_gateway_calls_total counter');
    expect(answer.text).toContain('# TYPE realty_gateway_request_duration_seconds histogram');
    expect(answer.text).toContain('# TYPE realty_queue_jobs gauge');
    expect(answer.text).toContain('# TYPE realty_breaker_transitions_total counter');
    const all = samples(answer.text);
    const value = (name: string, labels: Record<string, string>) =>
      all.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(value('realty_deals_finished_total', { type: 'encumbrance_request', outcome: 'queued' })).toBe(2);
    expect(value('realty_deals_finished_total', { type: 'encumbrance_request', outcome: 'unavailable' })).toBe(1);
    expect(value('realty_gateway_calls_total', { endpoint: 'suggest', status: '200' })).toBe(1);
    expect(value('realty_gateway_calls_total', { endpoint: 'docflows', status: '200' })).toBe(2);
    expect(value('realty_gateway_calls_total', { endpoint: 'docflows', status: '501' })).toBe(2);
    const docflowBuckets = all.filter(
      (s) => s.name === 'realty_gateway_request_duration_seconds_bucket' && s.labels.endpoint === 'docflows',
    );
    expect(docflowBuckets.map((s) => s.labels.le)).toEqual([...DURATION_BUCKETS.map(String), '+Inf']);
    expect(docflowBuckets.map((s) => s.value)).toEqual([...docflowBuckets.map((s) => s.value)].sort((a, b) => a - b));
    expect(docflowBuckets.at(-1)!.value).toBe(4);
    expect(value('realty_gateway_request_duration_seconds_count', { endpoint: 'docflows' })).toBe(4);
    expect(value('realty_gateway_request_duration_seconds_sum', { endpoint: 'docflows' })).toBeGreaterThan(0);
    expect(value('realty_queue_jobs', { state: 'failed' })).toBe(1);
    expect(value('realty_queue_jobs', { state: 'completed' })).toBe(3);
    expect(value('realty_queue_jobs', { state: 'waiting' })).toBe(1);
    expect(all.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(all.some((s) => s.name === 'nodejs_heap_size_used_bytes')).toBe(true);
  });
});

describe('realty-batch dashboard', () => {
  const env = ({ prefix, db }: Pick<Harness, 'prefix' | 'db'>): Record<string, string> => ({
    REDIS_URL,
    REALTY_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    DASHBOARD_USER: '',
    DASHBOARD_PASSWORD: '',
    DATABASE_URL: db.url,
  });

  command('refuses to start without DASHBOARD_USER and DASHBOARD_PASSWORD, in one sentence, exit 1', async ({ prefix, db }) => {
    const result = await runCli(['dashboard', '--port', '0'], env({ prefix, db }));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^realty-batch: DASHBOARD_USER and DASHBOARD_PASSWORD must both be set: .*\.\n$/);
    const half = await runCli(['dashboard', '--port', '0'], { ...env({ prefix, db }), DASHBOARD_USER: 'ops' });
    expect(half.code).toBe(1);
  });

  command('refuses --no-auth on any address but 127.0.0.1, as wrong usage', async ({ prefix, db }) => {
    const result = await runCli(['dashboard', '--no-auth', '--host', '0.0.0.0', '--port', '0'], env({ prefix, db }));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--no-auth listens on 127\.0\.0\.1 only/);
  });

  command('with --no-auth listens on 127.0.0.1 only, serves without credentials, and stops on SIGTERM', async ({ prefix, db }) => {
    const child = spawn(process.execPath, [CLI, 'dashboard', '--no-auth', '--port', '0'], {
      cwd: ROOT,
      env: childEnv(env({ prefix, db })),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
          if (stdout.includes('\n')) resolve(stdout);
        });
        void exited.then((code) => reject(new Error(`dashboard exited ${code}: ${stderr}`)));
      });
      const url = /listening on (http:\/\/\S+?)\/batches /.exec(line)?.[1];
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(line).toContain('no credentials asked');
      expect((await call(`${url}/batches`)).status).toBe(200);
      expect((await call(`${url}/metrics`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
