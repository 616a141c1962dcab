/**
 * A BullMQ worker of `deal` jobs with its gateway client and stores: what `run`
 * starts in-process and `work` starts alone.
 */
import { hostname } from 'node:os';
import { Worker, type Job, type Processor, type Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { DealProcessorContext } from './deal/context.js';
import { createContentStore } from './content-store.js';
import type { Logger } from '../logger.js';
import { createBatchStore } from '../batch/batch-store.js';
import { createOutcomeStore } from '../outcomes/store.js';
import type { Database } from '../db/database.js';
import { createCommitter } from '../db/group-commit.js';
import { deploymentOf } from '../db/deployment.js';
import { propertyKeyOf } from '../input/property-key.js';
import { createLedger } from '../ledger/ledger.js';
import { ensureFeed } from '../feed/feed-store.js';
import { startFeedFollower, type FeedFollower } from '../feed/follower.js';
import { startPruning } from '../db/prune.js';
import { createScriptBatcher } from '../redis/lua.js';
import { updateLockedJobData } from '../queue/locked-update.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import { ERROR_CODES } from '../outcomes/error-codes.js';
import { recordOutcome } from '../outcomes/record-outcome.js';
import { kindOf } from '../docflows/registry.js';
import { dealOf, jobDataOf, type DealJobData, type StoredJobData } from '../queue/job-data.js';
import type { Keys } from '../redis/keys.js';
import { createRealtyClient } from '../realty/client.js';
import { fixedSession, type SessionProvider } from '../realty/session.js';
import { retryDelay } from './deal/gateway-failure.js';
import { maskPersonalData } from './redact.js';
import { createRequestLimiter } from './rate-limit.js';
import { createMetricsRecorder } from '../metrics/recorder.js';
import { ApiHttpError } from '../errors.js';
import { BatchAbandonedError } from '../queue/batch-abandoned.js';
import { TUNABLES } from '../config.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { resolveWorkerSettings, type WorkerSettingsInput } from './worker-settings.js';
import { openQueue } from '../queue/deal-queue.js';

/**
 * What the worker runs with, and its settings (src/worker/worker-settings.ts): a resolved group
 * (`run`, `work`) or some of them (tests, benches), the rest resolved here once with their defaults.
 */
export interface DealWorkerOptions extends WorkerSettingsInput {
  /** Makes the processor of `deal` jobs from its context (jobs/deal.ts: createDealProcessor). */
  processor: (ctx: DealProcessorContext) => Processor<DealJobData, OutcomeRecord>;
  /** A connection with `maxRetriesPerRequest: null`; the worker duplicates it for blocking calls. */
  connection: Redis;
  keys: Keys;
  /** The system of record (the ledger, the feed, the docflows' states), opened and migrated; the caller closes it. */
  db: Database;
  apiUrl: string;
  /** A fixed session id (REALTY_SESSION_ID), when no `session` is given. */
  sessionId?: string;
  /** The fleet's session (src/redis/fleet-session.ts), started; wins over `sessionId`. */
  session?: SessionProvider;
  /**
   * Prune the database once an hour, one process of the fleet at a time (src/db/prune.ts): entries
   * unchanged this long (REALTY_LEDGER_DAYS) and expired batches. Not pruned when undefined.
   */
  ledgerMs?: number;
  logger: Logger;
}

export interface DealWorker {
  /** The worker's circuit breaker (its state, for status lines and tests). */
  breaker: CircuitBreaker;
  worker: Worker<DealJobData, OutcomeRecord>;
  queue: Queue<StoredJobData, OutcomeRecord>;
  /**
   * Stops taking jobs and lets active ones finish, for at most `graceMs`; jobs
   * still active then are left to BullMQ's stalled-job recovery (another worker
   * takes them over, with the same requestId). Closes the client; the caller
   * closes Redis. True when every active job finished in time.
   */
  close(graceMs?: number): Promise<boolean>;
}

export function createDealWorker(options: DealWorkerOptions): DealWorker {
  const { connection, keys, logger } = options;
  const queue = openQueue(connection, keys);
  queue.on('error', (err) => logger.error({ err: { message: err.message } }, 'queue error'));
  const metrics = createMetricsRecorder(connection, keys.metrics);
  const settings = resolveWorkerSettings(options);
  const breakerOptions = settings.breaker;
  let probeTimer: NodeJS.Timeout | undefined;
  let closing = false;
  const breaker = new CircuitBreaker(breakerOptions, (from, to, detail) => {
    metrics.breaker(to);
    const line = { breaker: to, from, ...detail, cooldownMs: breakerOptions.cooldownMs };
    if (to === 'open') {
      logger.warn(line, 'the gateway keeps failing: circuit breaker open, no new jobs until a probe succeeds');
      worker.pause(true).catch(() => undefined);
      scheduleProbe();
    } else if (to === 'closed') {
      if (detail.gaveUp)
        logger.warn(
          line,
          `the gateway failed ${breakerOptions.maxProbes} probes in a row: circuit breaker closed anyway; deals now spend their tries and end unavailable or failed`,
        );
      else logger.info(line, 'the gateway answers again: circuit breaker closed, taking jobs');
      if (!closing) worker.resume().catch(() => undefined);
    } else logger.info(line, 'circuit breaker half-open: one probe');
  });
  const scheduleProbe = (): void => {
    clearTimeout(probeTimer);
    // Timers run on a monotonic clock and may fire a millisecond before Date.now() says
    // the cool-down is over: one more millisecond, and probe() checks again anyway.
    probeTimer = setTimeout(() => void probe(), Math.max(0, breaker.openUntil - Date.now()) + 1);
    probeTimer.unref();
  };
  /** One harmless read: any answer but a 501, a 5xx or none at all means the gateway is back. */
  const probe = async (): Promise<void> => {
    if (closing || breaker.state !== 'open') return;
    if (!breaker.probeDue(Date.now())) {
      // Early: an open breaker without a pending probe would stay open for ever.
      scheduleProbe();
      return;
    }
    breaker.startProbe();
    let status: number;
    try {
      await client.suggest({ region: { name: 'realty-batch probe' } });
      status = 200;
    } catch (err) {
      status = err instanceof ApiHttpError ? err.status : 0;
    }
    if (breaker.probeResult(status, Date.now()) === 'open') scheduleProbe();
  };
  const session = options.session ?? fixedSession(options.sessionId ?? '');
  const client = createRealtyClient({
    baseUrl: options.apiUrl,
    session,
    timeoutMs: settings.timeoutMs,
    connections: Math.max(8, settings.concurrency),
    onCall: (endpoint, status, ms) => {
      metrics.call(endpoint, status, ms);
      breaker.record(status, Date.now());
    },
  });
  // The news feed on a client of its own: its reads wait for no deal's call, say nothing of the
  // deals' calls to the breaker, and may take longer than a deal's --timeout-ms (a slow feed is
  // late, not wrong; the follower backs off on its own).
  const feedClient = createRealtyClient({
    baseUrl: options.apiUrl,
    session,
    timeoutMs: Math.max(settings.timeoutMs, TUNABLES.feedTimeoutMs),
    connections: 2,
    onCall: (endpoint, status, ms) => metrics.call(endpoint, status, ms),
  });
  // The processor's own reads and writes (outcomes, ledger, checkpoints: two or three small
  // commands a deal) go on a connection of their own, so they do not queue behind BullMQ's
  // job fetches, whose replies carry whole deals. (ioredis' auto-pipelining was measured
  // here and left off: it holds each batch of commands until the previous one is
  // answered, which cost the 50 ms bench about 5 % and saved no CPU worth it.)
  // (The same call twice: TypeScript cannot call `duplicate` on the union of the two classes.)
  const storeConnection: Redis = connection instanceof Cluster ? connection.duplicate() : connection.duplicate();
  storeConnection.on('error', () => undefined);
  // One batcher for the claims and the outcomes: the scripts of one turn leave in one pipeline,
  // one socket write, whichever store sent them (two batchers made two writes a turn).
  const scripts = createScriptBatcher(storeConnection);
  // And one group committer: the ledger's decisions of one turn share one transaction, one commit.
  const commit = createCommitter(options.db);
  const outcomes = createOutcomeStore(storeConnection, keys, { run: scripts, db: options.db, commit });
  const ledger = createLedger(storeConnection, keys, options.db, {
    timeoutMs: settings.timeoutMs,
    feedLagMs: settings.feedLagMs,
    run: scripts,
    commit,
  });
  // Every worker process offers to follow the feed; one at a time does (a lock in Redis).
  const follower: FeedFollower | undefined = !settings.track
    ? undefined
    : startFeedFollower({
        redis: connection,
        keys,
        db: options.db,
        client: feedClient,
        logger,
        ...(settings.feedPollMs !== undefined && { pollMs: settings.feedPollMs }),
      });
  const pruning = options.ledgerMs === undefined ? undefined : startPruning(options.db, { ledgerMs: options.ledgerMs, logger });
  let sessionReported = false;
  const limiter = settings.rate !== undefined ? createRequestLimiter(connection, keys.rate, settings.rate) : undefined;

  const batches = createBatchStore(connection, keys, options.db);
  // Read once, when the first batch is met (memoized; a failed read is asked again).
  let databaseIdRead: Promise<string> | undefined;
  const databaseId = (): Promise<string> =>
    (databaseIdRead ??= deploymentOf(options.db, keys.prefix).then(
      (d) => d.databaseId,
      (err: unknown) => {
        databaseIdRead = undefined;
        throw err;
      },
    ));
  const processor = options.processor({
    client,
    outcomes,
    ledger,
    batches,
    contents: createContentStore(storeConnection, keys),
    ensureFeed: () => ensureFeed(options.db, feedClient),
    databaseId,
    apiUrl: options.apiUrl,
    attempts: settings.attempts,
    reconcileTimeoutMs: settings.reconcileTimeoutMs,
    timeoutMs: settings.timeoutMs,
    // A processor always has its token; a job without one (never, in a Worker) is written as BullMQ would.
    updateJobData: async (job, token, data) =>
      token
        ? updateLockedJobData(storeConnection, `${job.queueQualifiedName}:${job.id}`, token, data)
        : (await job.updateData(data as DealJobData), true),
    logger,
    onOutcome: (record) => metrics.outcome(record.outcome),
    holdUntil: () => (breaker.isOpen() ? Math.max(breaker.openUntil, Date.now() + 1000) : 0),
    async pauseForSession() {
      await connection.set(keys.pauseReason, 'session');
      await queue.pause();
      if (!sessionReported) {
        sessionReported = true;
        logger.error(
          options.session && session.current().generation > 0
            ? 'the gateway refused the session (401) even after a new login, or the login failed: the queue is paused on every host; check REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID and start a worker again'
            : 'the gateway refused the session (401): the queue is paused on every host; set a valid REALTY_SESSION_ID and start a worker again',
        );
      }
    },
    ...(limiter && {
      async throttle() {
        const { waitMs } = await limiter.take();
        if (waitMs > 0) {
          await worker.rateLimit(waitMs);
          throw Worker.RateLimitError();
        }
      },
    }),
  });

  const kept = settings.keptJobs;
  const worker = new Worker<DealJobData, OutcomeRecord>(keys.queueName, processor, {
    connection,
    prefix: keys.bullPrefix,
    concurrency: settings.concurrency,
    // Shown as the job's processedBy (Bull Board, tests): which host and process ran it.
    name: `${hostname()}:${process.pid}`,
    lockDuration: settings.lockMs,
    stalledInterval: settings.lockMs,
    // Finished jobs do not outlive their outcomes (TUNABLES.keptJobs); BullMQ's age is in seconds.
    removeOnComplete: { count: kept.completed },
    removeOnFail: { count: kept.failed, age: Math.round(kept.failedMaxAgeMs / 1000) },
    // A job whose worker died is run again by another, with the same requestId: safe, so
    // BullMQ's default of one stall is far too few for a fleet that gets restarted. A job
    // that kills its worker five times is failed (and `retry` can send it again).
    maxStalledCount: TUNABLES.maxStalls,
    // BullMQ honours worker.rateLimit() only on a worker with a limiter; the per-request
    // budget above is the real bound (a job makes one or two requests).
    ...(settings.rate !== undefined && { limiter: { max: settings.rate, duration: 1000 } }),
    settings: {
      backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) =>
        retryDelay(attemptsMade, settings.backoffMs, (err as { cause?: unknown } | undefined)?.cause ?? err),
    },
  });
  worker.on('error', (err) => logger.error({ err: { message: err.message } }, 'worker error'));
  // The net under the processor: a job BullMQ failed by itself (stalled too often) still gets
  // its one outcome, with its batch's expiry, and its personal data leaves Redis. Awaited by close().
  const nets = new Set<Promise<void>>();
  worker.on('failed', (job, err) => {
    // Jobs of a batch whose load failed are not rows of it: no outcome.
    if (!job?.finishedOn || err.name === BatchAbandonedError.name) return;
    // A job BullMQ failed by itself comes as its hash has it: without its batch and dealId (its id has them).
    try {
      job.data = jobDataOf(job.id, job.data);
    } catch (e) {
      logger.error({ err: { message: String(e) }, job: job.id }, 'could not record a failed job');
      return;
    }
    const net = recordFailedJob(job, err).catch((e: unknown) =>
      logger.error({ err: { message: String(e) }, batch: job.data.batch, row: job.data.row }, 'could not record a failed job'),
    );
    nets.add(net);
    void net.finally(() => nets.delete(net));
  });
  const recordFailedJob = async (job: Job<DealJobData, OutcomeRecord>, err: Error): Promise<void> => {
    const { batch, row, dealId } = job.data;
    const deal = dealOf(job.data);
    const stalled = /stalled more than allowable limit/.test(err.message);
    const profile = await batches.profile(batch);
    const bank = profile?.organization.inn;
    const entry = bank ? await ledger.read(bank, job.data.key ?? dealId, kindOf(job.data.type).type) : undefined;
    // A worker that died mid-call may have made the docflow: the row says so, and keeps its claim.
    const uncertain = entry?.state === 'sending' && entry.batch === batch && entry.row === row;
    const { ERR_UNCERTAIN, ERR_JOB_STALLED, ERR_JOB_FAILED } = ERROR_CODES;
    const record: OutcomeRecord = {
      row,
      dealId,
      outcome: 'failed',
      attempts: Math.max(1, job.attemptsMade),
      errorCode: (uncertain ? ERR_UNCERTAIN : stalled ? ERR_JOB_STALLED : ERR_JOB_FAILED).code,
      errorMessage: uncertain
        ? `its worker stopped ${TUNABLES.maxStalls + 1} times while it ran, once during a call that may have created a docflow; realty-batch retry ${batch} looks for it in the news feed before sending it again`
        : stalled
          ? `its worker stopped ${TUNABLES.maxStalls + 1} times while it ran (no call of it was in flight); realty-batch retry ${batch} sends it again`
          : // Whatever the processor threw (a masked message, or a defect's own): masked by recordOutcome.
            err.message,
      finishedAt: new Date().toISOString(),
    };
    // Written only when the row has no outcome: the processor's own comes first.
    await recordOutcome(outcomes, {
      batch,
      job: { key: `${job.queueQualifiedName}:${job.id}`, data: job.data },
      record,
      ifAbsent: true,
      ledger: bank
        ? {
            bank,
            resubmit: job.data.resubmit === true,
            keepClaim: uncertain,
            ...(deal && { property: propertyKeyOf(deal) }),
          }
        : undefined,
      mask: (text) => maskPersonalData(text, deal, profile),
    });
  };

  return {
    breaker,
    worker,
    queue,
    async close(graceMs = TUNABLES.graceMs) {
      closing = true;
      clearTimeout(probeTimer);
      await Promise.all([follower?.close(), pruning?.close()]);
      let timer: NodeJS.Timeout | undefined;
      const inTime = await Promise.race([
        worker.close().then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), graceMs);
        }),
      ]);
      clearTimeout(timer);
      if (!inTime) {
        logger.warn({ graceMs }, 'active jobs did not finish within the grace period; closing anyway, another worker takes them over');
        await worker.close(true);
      }
      await Promise.all(nets);
      await queue.close();
      // After a forced close, jobs still running may have commands waiting for Redis, and
      // QUIT would wait behind them: the connection is then dropped (their jobs are taken
      // over by another worker, as the warning says).
      if (inTime) await storeConnection.quit().catch(() => storeConnection.disconnect());
      else storeConnection.disconnect();
      await client.close();
      await feedClient.close();
      await metrics.close().catch(() => undefined);
      return inTime;
    },
  };
}
