/** `realty-batch work`: a long-running worker of every batch (and of the schedules' ticks) until a signal. */
import type { Command } from 'commander';
import { requireGateway, TUNABLES } from '../../config.js';
import { requireNoEviction } from '../../redis/connection.js';
import { type CliContext } from '../environment.js';
import { nonNegativeInt } from '../flags.js';
import { aborted, onShutdownSignals } from '../shutdown.js';
import { checkGatewayReachable } from '../gateway-check.js';
import { bindToGateway, withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';
import { addWorkerOptions, dealWorkerSettings, type WorkerFlags } from '../worker-options.js';

export interface WorkFlags extends WorkerFlags {
  graceMs: number;
}

export function registerWorkCommand(program: Command, context: CliContext): Command {
  const command = program
    .command('work')
    .description('a long-running worker: processes deals of every batch until SIGINT/SIGTERM (a second signal exits at once)')
    .option('--grace-ms <ms>', 'on a signal, how long active jobs may take to finish', nonNegativeInt('--grace-ms'), TUNABLES.graceMs);
  return addWorkerOptions(command).action(async (_flags: unknown, cmd: Command) => {
    const opts = cmd.opts<WorkFlags>();
    // The worker's settings, resolved once from the flags and passed whole.
    const worker = dealWorkerSettings(opts);
    const env = context.environment();
    const gateway = requireGateway(env.config);
    // A wrong REALTY_API_URL stops the worker at its start in one sentence, not one line per deal all night.
    await checkGatewayReachable(gateway.apiUrl, worker.timeoutMs);
    const shutdown = onShutdownSignals();
    await withDatabase(env, (db) =>
      withRedis(
        env,
        async (redis) => {
          await requireNoEviction(redis, env.config.redis);
          await bindToGateway(db, env, gateway);

          // Loaded when run, as every command's own heavy parts (program.ts).
          const [
            { createDealProcessor },
            { createTickProcessor },
            { createTickWorker },
            { createDealWorker },
            { openGatewaySession },
            { resumeAfterRefusedSession },
          ] = await Promise.all([
            import('../../../jobs/deal.js'),
            import('../../../jobs/tick.js'),
            import('../../schedule/tick-worker.js'),
            import('../../worker/create-worker.js'),
            import('../gateway-session.js'),
            import('../session-pause.js'),
          ]);
          const session = await openGatewaySession(gateway, { redis, keys: env.keys, timeoutMs: worker.timeoutMs, logger: env.logger });
          const dealWorker = createDealWorker({
            processor: createDealProcessor,
            apiUrl: gateway.apiUrl,
            session,
            connection: redis,
            keys: env.keys,
            db,
            logger: env.logger,
            ledgerMs: env.config.ledgerMs,
            ...worker,
          });
          await resumeAfterRefusedSession({
            redis,
            keys: env.keys,
            queue: dealWorker.queue,
            logger: env.logger,
            resumedBy: "with this worker's session",
          });
          // The ticks of nightly schedules (realty-batch schedule) run here too.
          const tickWorker = createTickWorker({
            processor: createTickProcessor,
            connection: redis,
            keys: env.keys,
            db,
            logger: env.logger,
            signal: shutdown.signal,
            feedLagMs: worker.feedLagMs,
          });
          env.logger.info({ concurrency: worker.concurrency }, 'worker started');
          await aborted(shutdown.signal);
          env.logger.info({ graceMs: opts.graceMs }, 'stopping: no new jobs; active ones may finish');
          await Promise.all([dealWorker.close(opts.graceMs), tickWorker.close()]);
        },
        { failFast: false },
      ),
    );
    env.logger.info('worker stopped');
  });
}
