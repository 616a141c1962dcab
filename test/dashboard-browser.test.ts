import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { chromium, type Browser } from 'playwright-core';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startDashboard, type RunningDashboard } from '../src/dashboard/server.js';
import { dealJobId } from '../src/queue/job-data.js';
import { ROOT } from './helpers/cli.js';
import { BY_SUGGEST, CRIMEA, EGRON, WITH_NUMBER, runDashboardBatch, type DashboardBatch } from './helpers/dashboard-batch.js';

/** Debian's chromium; `.ci/run` installs the package when it is missing. */
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, 'test/.tmp');
const credentials = { username: 'ops', password: 'night shift 2026' };

describe('the operations page in a real browser', () => {
  let night: DashboardBatch;
  let dashboard: RunningDashboard;
  let browser: Browser | undefined;

  beforeAll(async () => {
    // Москва and Крым answer 501 until the attempts run out: two failed jobs, one completed.
    night = await runDashboardBatch('dashboard-browser', [BY_SUGGEST, WITH_NUMBER, EGRON], { egronRegions: [CRIMEA, 'Москва'] });
    dashboard = await startDashboard({ redis: night.redis, keys: night.keys, host: '127.0.0.1', port: 0, credentials: { user: credentials.username, password: credentials.password } });
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await night?.close();
  });

  it('logs in, finds the failed jobs, retries them from Bull Board, sees them leave failed, and saves a screenshot', { timeout: 90_000 }, async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) to run the browser test`).toBe(true);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });

    // Without credentials the browser is challenged and gets nowhere.
    const stranger = await browser.newContext();
    await expect((await stranger.newPage()).goto(`${dashboard.url}/batches`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
    const challenged = await stranger.request.get(`${dashboard.url}/queues`);
    expect(challenged.status()).toBe(401);
    expect(challenged.headers()['www-authenticate']).toBe('Basic realm="realty-batch"');
    await stranger.close();

    const context = await browser.newContext({ httpCredentials: credentials, viewport: { width: 1400, height: 900 } });
    // Bull Board's page asks for web fonts; nothing leaves this machine in a test.
    await context.route((url) => !url.href.startsWith(dashboard.url), (route) => route.abort());
    const page = await context.newPage();

    expect((await page.goto(`${dashboard.url}/batches`))?.status()).toBe(200);
    await expect.poll(() => page.locator('td code', { hasText: 'night' }).count()).toBe(1);
    expect(await page.locator('tbody tr').first().innerText()).toMatch(/unavailable\s2/);
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'dashboard-batches.png'), fullPage: true });

    await page.getByRole('link', { name: 'Failed jobs' }).click();
    const failedJobs = [WITH_NUMBER, EGRON].map((dealId, i) => page.getByText(`deal ${dealId} (batch night, row ${i + 2})`));
    for (const job of failedJobs) await job.waitFor({ timeout: 15_000 });
    expect(page.url()).toBe(`${dashboard.url}/queues/queue/deals?status=failed`);
    await page.screenshot({ path: join(SHOTS, 'dashboard-failed.png'), fullPage: true });

    // The register answers again; the operator presses "Retry all" and confirms.
    night.sandbox.configure({ egronRegions: [] });
    await page.getByRole('button', { name: 'Retry all' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    for (const job of failedJobs) await job.waitFor({ state: 'detached', timeout: 15_000 });

    const queue = new Queue(night.keys.queueName, { connection: night.redis, prefix: night.keys.bullPrefix });
    try {
      expect(await queue.getJobCounts('failed', 'waiting')).toEqual({ failed: 0, waiting: 2 });
      for (const dealId of [WITH_NUMBER, EGRON]) expect(await queue.getJobState(dealJobId('night', dealId))).toBe('waiting');
    } finally {
      await queue.close();
    }

    await page.goto(`${dashboard.url}/queues/queue/deals?status=waiting`);
    for (const job of [WITH_NUMBER, EGRON].map((dealId, i) => page.getByText(`deal ${dealId} (batch night, row ${i + 2})`))) await job.waitFor({ timeout: 15_000 });
    await page.screenshot({ path: join(SHOTS, 'dashboard.png'), fullPage: true });
    expect(existsSync(join(SHOTS, 'dashboard.png'))).toBe(true);
  });
});
