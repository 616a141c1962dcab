import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { chromium, type Browser } from 'playwright-core';
import { describe, expect, afterAll } from 'vitest';
import { startDashboard, type RunningDashboard } from '../../../src/dashboard/server.js';
import { DEAL_JOB, dealJobId, type DealJobData } from '../../../src/queue/job-data.js';
import { ROOT } from '../../helpers/cli.js';
import { ROWS } from '../../helpers/fixtures.js';
import {
  batchHarness,
  changedRow,
  EGRON,
  WITH_NUMBER,
  runDashboardBatch,
  sampleDeal,
  type DashboardBatch,
} from '../../helpers/dashboard-batch.js';

/** Debian's chromium, which `npm test` installs when it is missing (scripts/prepare-tests.mjs), or CHROMIUM_PATH. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Written on every run (gitignored); `npm run screenshots` copies two of them into docs/screenshots/. */
const SHOTS = join(ROOT, 'artifacts/screenshots');
const credentials = { username: 'ops', password: 'night shift 2026' };
const LAUNCH = {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

// A batch of each describe's own: its prefix, database and sandbox.
const it = batchHarness({ label: 'dashboard-browser' });
const markup = batchHarness({ label: 'dashboard-hostile' });

describe('the operations page in a real browser', () => {
  let night: DashboardBatch;
  let dashboard: RunningDashboard;
  let browser: Browser | undefined;

  /** The failed jobs' deals, and their rows in the samples. */
  const FAILED = [
    { dealId: WITH_NUMBER, row: 2 },
    { dealId: EGRON, row: 24 },
  ];

  it.beforeAll(async ({ redis, keys, prefix, db, dir, sandbox, profile }) => {
    // The samples' 24 rows (samples/README.md), with Redis refusing the claims of two deals at
    // every try (a failure of the machinery): two failed jobs. Every other row reaches its
    // outcome (queued, suspended, invalid, ambiguous, not_found) and completes its job.
    night = await runDashboardBatch({ redis, keys, prefix, db, dir, sandbox, profile }, [], 'night', {
      rows: ROWS,
      refusedClaims: FAILED.map((f) => f.dealId),
    });
    dashboard = await startDashboard({
      redis: night.redis,
      keys: night.keys,
      db: night.db,
      host: '127.0.0.1',
      port: 0,
      credentials: { user: credentials.username, password: credentials.password },
    });
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
  });

  it(
    'logs in, finds the failed jobs, retries them from Bull Board, sees them leave failed, and saves screenshots of each page',
    { timeout: 90_000 },
    async () => {
      expect(
        existsSync(CHROMIUM),
        `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) to run the browser test`,
      ).toBe(true);
      browser = await chromium.launch(LAUNCH);

      // Without credentials the browser is challenged and gets nowhere.
      const stranger = await browser.newContext();
      await expect((await stranger.newPage()).goto(`${dashboard.url}/batches`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
      const challenged = await stranger.request.get(`${dashboard.url}/queues`);
      expect(challenged.status()).toBe(401);
      expect(challenged.headers()['www-authenticate']).toBe('Basic realm="realty-batch"');
      await stranger.close();

      // The pages ask for nothing but their own host (Bull Board's Google Fonts link is taken out).
      const context = await browser.newContext({ httpCredentials: credentials, viewport: { width: 1400, height: 900 } });
      const elsewhere: string[] = [];
      await context.route(
        (url) => !url.href.startsWith(dashboard.url),
        (route) => {
          elsewhere.push(route.request().url());
          return route.abort();
        },
      );
      const page = await context.newPage();

      expect((await page.goto(`${dashboard.url}/batches`))?.status()).toBe(200);
      await expect.poll(() => page.locator('td code', { hasText: 'night' }).count()).toBe(1);
      const counts = await page.locator('tbody tr').first().innerText();
      for (const count of ['queued 12', 'suspended 4', 'invalid 3', 'ambiguous 2', 'not_found 1', 'failed 2'])
        expect(counts.replace(/\s+/g, ' ')).toContain(count);
      await mkdir(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, 'batches.png'), fullPage: true });

      await page.getByRole('link', { name: 'Failed jobs' }).click();
      const failedJobs = FAILED.map(({ dealId, row }) => page.getByText(`deal ${dealId} (batch night, row ${row})`));
      for (const job of failedJobs) await job.waitFor({ timeout: 15_000 });
      expect(page.url()).toBe(`${dashboard.url}/queues/queue/deals?status=failed`);
      // Times as the rest of the tool writes them: ISO 8601 in UTC, the date even for today's.
      await expect.poll(() => page.locator('time').count()).toBeGreaterThan(0);
      for (const time of await page.locator('time').allInnerTexts()) expect(time).toMatch(/^\d{4}-\d{2}-\d{2}, \d{2}:\d{2}:\d{2} UTC$/);
      await page.screenshot({ path: join(SHOTS, 'bull-board-failed.png'), fullPage: true });

      // Redis takes writes again; the operator presses "Retry all" and confirms.
      await page.getByRole('button', { name: 'Retry all' }).click();
      await page.getByRole('button', { name: 'Confirm' }).click();
      for (const job of failedJobs) await job.waitFor({ state: 'detached', timeout: 15_000 });

      const queue = new Queue(night.keys.queueName, { connection: night.redis, prefix: night.keys.bullPrefix });
      try {
        expect(await queue.getJobCounts('failed', 'waiting')).toEqual({ failed: 0, waiting: 2 });
        for (const { dealId } of FAILED) expect(await queue.getJobState(dealJobId('night', dealId))).toBe('waiting');
      } finally {
        await queue.close();
      }

      await page.goto(`${dashboard.url}/queues/queue/deals?status=waiting`);
      for (const job of FAILED.map(({ dealId, row }) => page.getByText(`deal ${dealId} (batch night, row ${row})`)))
        await job.waitFor({ timeout: 15_000 });
      await page.screenshot({ path: join(SHOTS, 'bull-board-retried.png'), fullPage: true });
      for (const shot of ['batches.png', 'bull-board-failed.png', 'bull-board-retried.png'])
        expect(existsSync(join(SHOTS, shot))).toBe(true);
      expect(elsewhere).toEqual([]);
    },
  );
});

/** Markup that would run if any page put a deal's field into its HTML as it is. */
const IMG = '<img src=x onerror="window.__pwned=1;alert(1)">';
const SCRIPT = '<script>window.__pwned=1;alert(2)</script>';

describe('the operations page in a real browser, with markup in the deals', () => {
  let hostile: DashboardBatch;
  let dashboard: RunningDashboard;
  let browser: Browser | undefined;
  /** A waiting job still holds its deal, whose fields Bull Board shows in the job's data. */
  const waiting = { ...sampleDeal(WITH_NUMBER), dealId: `W ${IMG}`, city: IMG, street: SCRIPT };

  markup.beforeAll(async ({ redis, keys, prefix, db, dir, sandbox, profile }) => {
    // The input file's name is on the batches page; the dealIds are in Bull Board's job titles.
    // The second row's claim is refused (a failure of the machinery): its job fails, with a stack trace.
    hostile = await runDashboardBatch({ redis, keys, prefix, db, dir, sandbox, profile }, [], 'night', {
      fileName: `night ${IMG}.csv`,
      rows: [changedRow(WITH_NUMBER, { dealId: `MSK ${IMG}`, street: SCRIPT }), changedRow(EGRON, { dealId: `CRM ${SCRIPT}` })],
      refusedClaims: [`CRM ${SCRIPT}`],
    });
    const queue = new Queue<DealJobData>(hostile.keys.queueName, { connection: hostile.redis, prefix: hostile.keys.bullPrefix });
    await queue.add(
      DEAL_JOB,
      { batch: 'later', row: 1, dealId: waiting.dealId, deal: waiting },
      { jobId: dealJobId('later', waiting.dealId) },
    );
    await queue.close();
    dashboard = await startDashboard({
      redis: hostile.redis,
      keys: hostile.keys,
      db: hostile.db,
      host: '127.0.0.1',
      port: 0,
      credentials: { user: credentials.username, password: credentials.password },
    });
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
  });

  markup(
    "shows the markup as text on the batches page and in a job's data, runs none of it, and loads Bull Board with no policy violation",
    { timeout: 90_000 },
    async () => {
      browser = await chromium.launch(LAUNCH);
      const context = await browser.newContext({ httpCredentials: credentials });
      const elsewhere: string[] = [];
      await context.route(
        (url) => !url.href.startsWith(dashboard.url),
        (route) => {
          elsewhere.push(route.request().url());
          return route.abort();
        },
      );
      // Before any script of the page: every violation the policy reports, with what it refused.
      await context.addInitScript({
        content:
          "window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`));",
      });
      const page = await context.newPage();
      const dialogs: string[] = [];
      const policyErrors: string[] = [];
      const pageErrors: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      page.on('console', (message) => {
        if (/Content.Security.Policy/i.test(message.text())) policyErrors.push(message.text());
      });
      page.on('pageerror', (err) => pageErrors.push(err.message));
      // Strings, evaluated in the page: the tests are compiled without the DOM's types.
      const pwned = () => page.evaluate('window.__pwned');
      const violations = () => page.evaluate('window.__violations');
      const ranNothing = async (where: string) => {
        expect(await pwned(), where).toBeUndefined();
        expect(await violations(), where).toEqual([]);
        expect({ dialogs, policyErrors, pageErrors, elsewhere }, where).toEqual({
          dialogs: [],
          policyErrors: [],
          pageErrors: [],
          elsewhere: [],
        });
      };

      expect((await page.goto(`${dashboard.url}/batches`))?.status()).toBe(200);
      await expect.poll(() => page.locator('td .muted').first().innerText()).toContain(`night ${IMG}.csv`);
      await ranNothing('the batches page');

      await page.goto(`${dashboard.url}/queues/queue/deals?status=waiting`);
      await page.getByText(`deal ${waiting.dealId} (batch later, row 1)`).waitFor({ timeout: 15_000 });
      // The job's data, in Bull Board's tree of the (masked) deal: the fields as text.
      const field = (name: string) => page.getByText(`${name}:`, { exact: true }).locator('xpath=..');
      await expect.poll(() => field('street').innerText(), { timeout: 15_000 }).toBe(`street:"${SCRIPT}",`);
      expect(await field('city').innerText()).toBe(`city:"${IMG}",`);
      await ranNothing("a waiting job's data");

      await page.goto(`${dashboard.url}/queues/queue/deals?status=completed`);
      await page.getByText(`deal MSK ${IMG} (batch night, row 1)`).waitFor({ timeout: 15_000 });
      await ranNothing('the completed jobs');
      await page.goto(`${dashboard.url}/queues/queue/deals?status=failed`);
      await page.getByText(`deal CRM ${SCRIPT} (batch night, row 2)`).waitFor({ timeout: 15_000 });
      // Its error's stack trace, highlighted (tokens in spans) by Bull Board's Web Worker: the policy lets the worker run.
      await expect.poll(() => page.locator('code.hljs span[class^="hljs-"]').count(), { timeout: 15_000 }).toBeGreaterThan(0);
      await expect
        .poll(() => page.workers().map((w) => new URL(w.url()).pathname))
        .toEqual([expect.stringMatching(/^\/queues\/static\/js\/async\/highlight-worker\./)]);
      await ranNothing("a failed job's error");

      // Markup that got into a page some other way would still not run: the policy refuses inline handlers.
      for (const path of ['/batches', '/queues/queue/deals?status=waiting']) {
        await page.goto(`${dashboard.url}${path}`);
        await page.evaluate(`document.body.insertAdjacentHTML('beforeend', ${JSON.stringify(IMG)})`);
        await expect.poll(violations, { timeout: 5_000 }).toEqual([expect.stringMatching(/^script-src-attr /)]);
        expect(await pwned(), path).toBeUndefined();
      }
      expect(dialogs).toEqual([]);
    },
  );
});
