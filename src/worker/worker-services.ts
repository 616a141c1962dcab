/**
 * What a deal worker works with, made once when it starts: the gateway clients, the stores on a
 * Redis connection of their own, the feed follower and the pruning it takes part in, the rate
 * limiter; and from them the processor's context (src/worker/deal/context.ts).
 */
import { Worker, type Job, type Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Logger } from '../logger.js';
import type { Database } from '../db/database.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { createBatchStore, type BatchStore } from '../batch/batch-store.js';
import { createOutcomeStore, type OutcomeStore } from '../outcomes/store.js';
import { createCommitter } from '../db/group-commit.js';
import { deploymentOf } from '../db/deployment.js';
import { startPruning, type Pruning } from '../db/prune.js';
import { createLedger, type Ledger } from '../ledger/ledger.js';
import { ensureFeed } from '../feed/feed-store.js';
import { startFeedFollower, type FeedFollower } from '../feed/follower.js';
import { createScriptBatcher } from '../redis/lua.js';
import { updateLockedJobData } from '../queue/locked-update.js';
import type { DealJobData, StoredJobData } from '../queue/job-data.js';
import { createRealtyClient, type RealtyClient } from '../realty/client.js';
import { fixedSession, type SessionProvider } from '../realty/session.js';
import { TUNABLES } from '../config.js';
import type { DealProcessorContext } from './deal/context.js';
import { createContentStore, type ContentStore } from './content-store.js';
import { createRequestLimiter, type RequestLimiter } from './rate-limit.js';
import type { WorkerSettings } from './worker-settings.js';

/** Where the worker's services connect to, and who they tell. */
export interface WorkerServicesOptions {
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

/** The worker's own parts the services report to. */
export interface WorkerServicesHooks {
  metrics: MetricsRecorder;
  /** The deal queue: paused on every host when the gateway refuses the session. */
  queue: Queue<StoredJobData, OutcomeRecord>;
  /** Each deal call's answer (HTTP status, 0 for none), for the circuit breaker. */
  recordCall(status: number): void;
}

/** The worker's hooks the processor's context is made with. */
export interface ProcessorHooks {
  /** While the circuit breaker is open: when to try again (ms since epoch); 0 when closed. */
  holdUntil(): number;
  /** BullMQ's worker.rateLimit: no job is fetched for that long. */
  rateLimit(ms: number): Promise<void>;
}

export class WorkerServices {
  readonly session: SessionProvider;
  /** The deals' gateway client: its answers count for the breaker. */
  readonly client: RealtyClient;
  readonly feedClient: RealtyClient;
  /** The stores' connection (see the constructor); closed by the worker's close. */
  readonly storeConnection: Redis;
  readonly outcomes: OutcomeStore;
  readonly ledger: Ledger;
  readonly batches: BatchStore;
  readonly contents: ContentStore;
  readonly follower: FeedFollower | undefined;
  readonly pruning: Pruning | undefined;
  readonly limiter: RequestLimiter | undefined;
  private databaseIdRead: Promise<string> | undefined;
  private sessionReported = false;

  constructor(
    private readonly options: WorkerServicesOptions,
    private readonly settings: WorkerSettings,
    private readonly hooks: WorkerServicesHooks,
  ) {
    const { connection, keys, db, logger } = options;
    const { metrics } = hooks;
    this.session = options.session ?? fixedSession(options.sessionId ?? '');
    this.client = createRealtyClient({
      baseUrl: options.apiUrl,
      session: this.session,
      timeoutMs: settings.timeoutMs,
      connections: Math.max(8, settings.concurrency),
      onCall: (endpoint, status, ms) => {
        metrics.call(endpoint, status, ms);
        hooks.recordCall(status);
      },
    });
    // The news feed on a client of its own: its reads wait for no deal's call, say nothing of the
    // deals' calls to the breaker, and may take longer than a deal's --timeout-ms (a slow feed is
    // late, not wrong; the follower backs off on its own).
    this.feedClient = createRealtyClient({
      baseUrl: options.apiUrl,
      session: this.session,
      timeoutMs: Math.max(settings.timeoutMs, TUNABLES.feedTimeoutMs),
      connections: 2,
      onCall: (endpoint, status, ms) => metrics.call(endpoint, status, ms),
    });
    // The processor's own reads and writes (outcomes, ledger, checkpoints: two or three small
    // commands a deal) go on a connection of their own, so they do not queue behind BullMQ's
    // job fetches, whose replies carry whole deals. ioredis' auto-pipelining stays off: it
    // holds each batch of commands until the previous one is answered, so a deal's writes
    // wait on other deals' round trips, and it saves no CPU worth that.
    // (The same call twice: TypeScript cannot call `duplicate` on the union of the two classes.)
    this.storeConnection = connection instanceof Cluster ? connection.duplicate() : connection.duplicate();
    this.storeConnection.on('error', () => undefined);
    // One batcher for the claims and the outcomes: the scripts of one turn leave in one pipeline,
    // one socket write, whichever store sent them.
    const scripts = createScriptBatcher(this.storeConnection);
    // And one group committer: the ledger's decisions of one turn share one transaction, one commit.
    const commit = createCommitter(db);
    this.outcomes = createOutcomeStore(this.storeConnection, keys, { run: scripts, db, commit });
    this.ledger = createLedger(this.storeConnection, keys, db, {
      timeoutMs: settings.timeoutMs,
      feedLagMs: settings.feedLagMs,
      run: scripts,
      commit,
    });
    // Every worker process offers to follow the feed; one at a time does (a lock in Redis).
    this.follower = !settings.track
      ? undefined
      : startFeedFollower({
          redis: connection,
          keys,
          db,
          client: this.feedClient,
          logger,
          ...(settings.feedPollMs !== undefined && { pollMs: settings.feedPollMs }),
        });
    this.pruning = options.ledgerMs === undefined ? undefined : startPruning(db, { ledgerMs: options.ledgerMs, logger });
    this.limiter = settings.rate !== undefined ? createRequestLimiter(connection, keys.rate, settings.rate) : undefined;
    this.batches = createBatchStore(connection, keys, db);
    this.contents = createContentStore(this.storeConnection, keys);
  }

  /** The processor's context: these services, the settings it needs, and the worker's hooks. */
  processorContext(hooks: ProcessorHooks): DealProcessorContext {
    const { settings, limiter } = this;
    return {
      client: this.client,
      outcomes: this.outcomes,
      ledger: this.ledger,
      batches: this.batches,
      contents: this.contents,
      ensureFeed: () => ensureFeed(this.options.db, this.feedClient),
      databaseId: () => this.databaseId(),
      apiUrl: this.options.apiUrl,
      attempts: settings.attempts,
      reconcileTimeoutMs: settings.reconcileTimeoutMs,
      timeoutMs: settings.timeoutMs,
      updateJobData: (job, token, data) => this.updateJobData(job, token, data),
      logger: this.options.logger,
      onOutcome: (record, type) => this.hooks.metrics.outcome(record.outcome, type),
      holdUntil: () => hooks.holdUntil(),
      pauseForSession: () => this.pauseForSession(),
      ...(limiter && {
        async throttle() {
          const { waitMs } = await limiter.take();
          if (waitMs > 0) {
            await hooks.rateLimit(waitMs);
            throw Worker.RateLimitError();
          }
        },
      }),
    };
  }

  /** Read once, when the first batch is met (memoized; a failed read is asked again). */
  databaseId(): Promise<string> {
    return (this.databaseIdRead ??= deploymentOf(this.options.db, this.options.keys.prefix).then(
      (d) => d.databaseId,
      (err: unknown) => {
        this.databaseIdRead = undefined;
        throw err;
      },
    ));
  }

  /** A processor always has its token; a job without one (never, in a Worker) is written as BullMQ would. */
  async updateJobData(job: Job<DealJobData, OutcomeRecord>, token: string | undefined, data: StoredJobData): Promise<boolean> {
    return token
      ? updateLockedJobData(this.storeConnection, `${job.queueQualifiedName}:${job.id}`, token, data)
      : (await job.updateData(data as DealJobData), true);
  }

  /** The gateway refused the session: the queue pauses on every host, and the log says why once. */
  async pauseForSession(): Promise<void> {
    const { connection, keys, logger } = this.options;
    await connection.set(keys.pauseReason, 'session');
    await this.hooks.queue.pause();
    if (!this.sessionReported) {
      this.sessionReported = true;
      logger.error(
        this.options.session && this.session.current().generation > 0
          ? 'the gateway refused the session (401) even after a new login, or the login failed: the queue is paused on every host; check REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID and start a worker again'
          : 'the gateway refused the session (401): the queue is paused on every host; set a valid REALTY_SESSION_ID and start a worker again',
      );
    }
  }
}
