/**
 * A BullMQ worker of `deal` jobs with its gateway client and stores: what `run`
 * starts in-process and `work` starts alone. It is made of named parts: the services it works
 * with (worker-services.ts), a breaker gate that pauses it while the gateway keeps failing
 * (breaker-gate.ts), a safety net for the jobs BullMQ fails by itself (safety-net.ts); here are
 * its BullMQ options and the order it closes in.
 */
import { hostname } from 'node:os';
import { Worker, type Processor, type Queue, type WorkerOptions } from 'bullmq';
import type { DealProcessorContext } from './deal/context.js';
import type { Logger } from '../logger.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import type { DealJobData, StoredJobData } from '../queue/job-data.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { retryDelay } from './deal/gateway-failure.js';
import { createMetricsRecorder } from '../metrics/recorder.js';
import { TUNABLES } from '../config.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import { resolveWorkerSettings, type WorkerSettings, type WorkerSettingsInput } from './worker-settings.js';
import { openQueue } from '../queue/deal-queue.js';
import { BreakerGate } from './breaker-gate.js';
import { SafetyNet } from './safety-net.js';
import { WorkerServices, type WorkerServicesOptions } from './worker-services.js';

/**
 * What the worker runs with, and its settings (src/worker/worker-settings.ts): a resolved group
 * (`run`, `work`) or some of them (tests, benches), the rest resolved here once with their defaults.
 * Where it connects to is WorkerServicesOptions (src/worker/worker-services.ts).
 */
export interface DealWorkerOptions extends WorkerSettingsInput, WorkerServicesOptions {
  /** Makes the processor of `deal` jobs from its context (jobs/deal.ts: createDealProcessor). */
  processor: (ctx: DealProcessorContext) => Processor<DealJobData, OutcomeRecord>;
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
  // The gate reaches the worker and the services' client, and the processor the worker, all made
  // after them: through arrows, which run only once jobs do, when all three exist.
  const gate = new BreakerGate({
    breaker: settings.breaker,
    logger,
    metrics,
    pause: () => worker.pause(true),
    resume: () => worker.resume(),
    probe: () => services.client.suggest({ region: { name: 'realty-batch probe' } }),
  });
  const services = new WorkerServices(options, settings, { metrics, queue, recordCall: (status) => gate.record(status) });
  const processor = options.processor(
    services.processorContext({ holdUntil: () => gate.holdUntil(), rateLimit: (ms) => worker.rateLimit(ms) }),
  );
  const worker = new Worker<DealJobData, OutcomeRecord>(keys.queueName, processor, workerOptions(options, settings));
  worker.on('error', (err) => logger.error({ err: { message: err.message } }, 'worker error'));
  const net = new SafetyNet(services, logger);
  net.watch(worker);
  const parts: WorkerParts = { gate, services, worker, net, queue, metrics, logger };
  return {
    breaker: gate.breaker,
    worker,
    queue,
    close: (graceMs = TUNABLES.graceMs) => closeDealWorker(parts, graceMs),
  };
}

/** BullMQ's options for the deal worker, from its settings. */
function workerOptions(options: DealWorkerOptions, settings: WorkerSettings): WorkerOptions {
  const kept = settings.keptJobs;
  return {
    connection: options.connection,
    prefix: options.keys.bullPrefix,
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
    // budget (WorkerServices' limiter) is the real bound (a job makes one or two requests).
    ...(settings.rate !== undefined && { limiter: { max: settings.rate, duration: 1000 } }),
    settings: {
      backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) =>
        retryDelay(attemptsMade, settings.backoffMs, (err as { cause?: unknown } | undefined)?.cause ?? err),
    },
  };
}

/** What the close order acts on. */
interface WorkerParts {
  gate: BreakerGate;
  services: WorkerServices;
  worker: Worker<DealJobData, OutcomeRecord>;
  net: SafetyNet;
  queue: Queue<StoredJobData, OutcomeRecord>;
  metrics: MetricsRecorder;
  logger: Logger;
}

/**
 * The close order, in one place:
 * 1. the breaker gate: no probe, and nothing resumes the worker;
 * 2. the feed follower and the pruning, which run beside the jobs;
 * 3. the worker: active jobs get `graceMs` to finish, then it is closed by force;
 * 4. the safety net's outcomes still being written (a job failed during 3 gets its outcome);
 * 5. the queue;
 * 6. the stores' connection, which the jobs and the net wrote on;
 * 7. the gateway clients, the deals' then the feed's;
 * 8. the metrics, flushed last so that they count everything above.
 * True when every active job finished within `graceMs`.
 */
async function closeDealWorker(parts: WorkerParts, graceMs: number): Promise<boolean> {
  const { gate, services, net, queue, metrics } = parts;
  gate.close();
  await Promise.all([services.follower?.close(), services.pruning?.close()]);
  const inTime = await closeWorkerWithin(parts, graceMs);
  await net.settled();
  await queue.close();
  // After a forced close, jobs still running may have commands waiting for Redis, and
  // QUIT would wait behind them: the connection is then dropped (their jobs are taken
  // over by another worker, as the warning says).
  const { storeConnection } = services;
  if (inTime) await storeConnection.quit().catch(() => storeConnection.disconnect());
  else storeConnection.disconnect();
  await services.client.close();
  await services.feedClient.close();
  await metrics.close().catch(() => undefined);
  return inTime;
}

/** Closes the worker, by force once `graceMs` is over. True when its active jobs finished in time. */
async function closeWorkerWithin({ worker, logger }: WorkerParts, graceMs: number): Promise<boolean> {
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
  return inTime;
}
