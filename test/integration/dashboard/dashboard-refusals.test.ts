import { Queue, Worker, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect, afterEach } from 'vitest';
import { startDashboard, type RunningDashboard } from '../../../src/dashboard/server.js';
import { DEAL_JOB, dealJobId, type DealJobData } from '../../../src/queue/job-data.js';
import type { Keys } from '../../../src/redis/keys.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';

const MINUTE = 60_000;
/** Older than Bull Board's clean grace (5 s), so a clean that is let through takes it. */
const LONG_AGO = () => Date.now() - 10 * MINUTE;

const it = harness({ label: 'board-refusals', redis: { maxRetriesPerRequest: null } });

describe('the board refuses what would lose a row', () => {
  let redis: Redis;
  let keys: Keys;
  let queue: Queue<DealJobData>;
  let dashboard: RunningDashboard;

  it.beforeEach(async ({ redis: client, keys: made, db: store }) => {
    redis = client;
    keys = made;
    queue = new Queue<DealJobData>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
    dashboard = await startDashboard({ redis, keys, db: store.db, host: '127.0.0.1', port: 0 });
  });
  // Before the harness disconnects the client and deletes the prefix.
  afterEach(async () => {
    await dashboard?.close();
    await queue?.close();
  });

  /** A Bull Board action on the deals queue, as the page sends it. */
  async function put(path: string, body: unknown = {}): Promise<{ status: number; error: unknown }> {
    const answer = await dashboard.app.inject({
      method: 'PUT',
      url: `/queues/api/queues/${keys.queueName}${path}`,
      payload: body as Record<string, unknown>,
    });
    const parsed = answer.body ? (JSON.parse(answer.body) as { error?: unknown }) : {};
    return { status: answer.statusCode, error: parsed.error };
  }

  /** A stripped deal job (batch, row, dealId), as `load` names it. */
  async function addDeal(batch: string, row: number, options: JobsOptions = {}): Promise<string> {
    const dealId = `NSK-2026-${String(row).padStart(6, '0')}`;
    const jobId = dealJobId(batch, dealId);
    await queue.add(DEAL_JOB, { batch, row, dealId }, { jobId, timestamp: LONG_AGO(), ...options });
    return jobId;
  }

  /** Runs the waiting jobs through a worker: even rows complete, odd rows fail. */
  async function finishAll(count: number): Promise<void> {
    const worker = new Worker<DealJobData>(
      keys.queueName,
      async (job) => {
        if (job.data.row % 2 === 1) throw new Error('the gateway refused the deal');
        return { row: job.data.row };
      },
      { connection: redis, prefix: keys.bullPrefix },
    );
    try {
      await waitFor(
        async () => {
          const counts = await queue.getJobCounts('completed', 'failed');
          return (counts.completed ?? 0) + (counts.failed ?? 0) >= count;
        },
        { timeoutMs: 10_000, intervalMs: 20, what: `${count} jobs to finish (completed or failed)` },
      );
    } finally {
      await worker.close();
    }
  }

  /** Dates finished jobs back past the clean grace, as if they had finished a while ago. */
  async function ageFinished(state: 'completed' | 'failed', jobIds: string[]): Promise<void> {
    for (const jobId of jobIds) await redis.zadd(`${keys.bullPrefix}:${keys.queueName}:${state}`, 'XX', LONG_AGO(), jobId);
  }

  /** Jobs in every unfinished state a deal job can be in without a worker, old enough for any clean. */
  async function addUnfinished(): Promise<Record<string, string>> {
    return {
      waiting: await addDeal('night', 10),
      delayed: await addDeal('night', 11, { delay: 60 * MINUTE }),
      prioritized: await addDeal('night', 12, { priority: 1 }),
    };
  }

  async function expectStates(jobs: Record<string, string>): Promise<void> {
    for (const [state, jobId] of Object.entries(jobs)) expect(await queue.getJobState(jobId), jobId).toBe(state);
  }

  it('cleans completed and failed jobs, and refuses with 405 to clean any state whose rows have no outcome yet', async () => {
    const finished = [await addDeal('night', 1), await addDeal('night', 2), await addDeal('night', 3), await addDeal('night', 4)];
    await finishAll(finished.length);
    await ageFinished('completed', finished);
    await ageFinished('failed', finished);
    const unfinished = await addUnfinished();

    for (const status of ['waiting', 'wait', 'delayed', 'prioritized', 'paused', 'active', 'waiting-children', 'latest', 'Completed']) {
      const answer = await put(`/clean/${status}`);
      expect(answer.status, status).toBe(405);
      expect(answer.error, status).toBe(
        'Only completed and failed jobs can be cleaned: the others are rows without an outcome yet, and cleaning them would lose the rows.',
      );
    }
    await expectStates(unfinished);

    expect((await put('/clean/completed')).status).toBe(200);
    expect(await queue.getJobCounts('completed', 'failed')).toEqual({ completed: 0, failed: 2 });
    expect((await put('/clean/failed')).status).toBe(200);
    expect(await queue.getJobCounts('completed', 'failed')).toEqual({ completed: 0, failed: 0 });
    await expectStates(unfinished);
  });

  it('refuses with 409 to remove a waiting, delayed or prioritized job, naming its batch and row, and removes a finished one', async () => {
    const [completed, failed] = [await addDeal('night', 2), await addDeal('night', 1)];
    await finishAll(2);
    const unfinished = await addUnfinished();
    const rows: Record<string, number> = { waiting: 10, delayed: 11, prioritized: 12 };

    for (const [state, jobId] of Object.entries(unfinished)) {
      const answer = await put(`/${jobId}/clean`);
      expect(answer.status, state).toBe(409);
      expect(answer.error, state).toBe(
        `Job ${jobId} (batch night, row ${rows[state]}) has no outcome yet (${state}), so removing it would lose the row: let it finish, or pause the queue.`,
      );
      expect(answer.error).not.toMatch(/NSK-2026/);
    }
    await expectStates(unfinished);

    expect(await queue.getJobState(completed)).toBe('completed');
    expect(await queue.getJobState(failed)).toBe('failed');
    expect((await put(`/${completed}/clean`)).status).toBe(204);
    expect((await put(`/${failed}/clean`)).status).toBe(204);
    expect(await queue.getJobState(completed)).toBe('unknown');
    expect(await queue.getJobState(failed)).toBe('unknown');
  });

  it('refuses with 409 to remove the job a worker is running, which then finishes', async () => {
    const jobId = await addDeal('night', 2);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const worker = new Worker<DealJobData>(
      keys.queueName,
      async () => {
        await held;
        return { row: 2 };
      },
      { connection: redis, prefix: keys.bullPrefix },
    );
    try {
      await new Promise<void>((resolve) => worker.once('active', () => resolve()));
      const answer = await put(`/${jobId}/clean`);
      expect(answer.status).toBe(409);
      expect(answer.error).toBe(
        `Job ${jobId} (batch night, row 2) has no outcome yet (active), so removing it would lose the row: let it finish, or pause the queue.`,
      );
      expect(await queue.getJobState(jobId)).toBe('active');
      const completed = new Promise<void>((resolve) => worker.once('completed', () => resolve()));
      release();
      await completed;
      expect(await queue.getJobState(jobId)).toBe('completed');
    } finally {
      release();
      await worker.close();
    }
  });

  it('refuses with 405 a queue-wide concurrency or rate limit, pointing to the worker options, and still releases an active limit', async () => {
    const waiting = await addDeal('night', 1);

    const concurrency = await put('/concurrency', { concurrency: 1 });
    expect(concurrency.status).toBe(405);
    expect(concurrency.error).toBe(
      'A queue-wide concurrency is not set from this page, since every worker of the fleet would obey it: start the workers with realty-batch work --concurrency N instead.',
    );
    expect(await queue.getGlobalConcurrency()).toBeNull();

    const rate = await put('/rate-limit', { max: 1, duration: 60 * MINUTE });
    expect(rate.status).toBe(405);
    expect(rate.error).toBe(
      'A queue-wide rate limit is not set from this page, since every worker of the fleet would obey it: start the workers with realty-batch work --rate N instead.',
    );
    expect(await queue.getGlobalRateLimit()).toBeNull();

    // Releasing sets nothing: it only ends the limiter's current window.
    expect((await put('/rate-limit/release')).status).toBe(200);
    expect(await queue.getJobState(waiting)).toBe('waiting');
  });
});
