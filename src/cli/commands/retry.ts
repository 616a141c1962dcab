/** `realty-batch retry <batch>`: send rows that ended with given outcomes around again (a running `work` takes them). */
import type { Command } from 'commander';
import { DEFAULT_RETRY_OUTCOMES, retryBatch } from '../../batch/retry-batch.js';
import { describeUnchanged } from '../../batch/retry-unchanged.js';
import { describeQuery, suggestQuery } from '../../worker/deal/resolve-cadastral.js';
import type { Outcome } from '../../domain/outcome.js';
import { loadProfile } from '../../input/profile.js';
import { openQueue } from '../../queue/deal-queue.js';
import type { RedisClient } from '../../redis/connection.js';
import type { CliContext, Env } from '../environment.js';
import { checkBatch } from '../input-options.js';
import { rows } from '../print.js';
import { commandOperator, recordAction } from '../../db/operator-actions.js';
import { refuseOtherGateway, withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';

export interface RetryFlags {
  outcome?: Outcome[];
  missing?: boolean;
  force?: boolean;
  input?: string;
  profile?: string;
  operator?: string;
}

export function registerRetryCommand(program: Command, context: CliContext): Command {
  return program
    .command('retry')
    .description('send the rows of a batch that ended with given outcomes around again (a running `work` processes them)')
    .argument('<batch>', 'batch id')
    .option(
      '--outcome <outcome...>',
      `outcomes to retry (default ${DEFAULT_RETRY_OUTCOMES.join(' and ')}, unless only --missing is given); pending: rows without an outcome, a lost job made again, a waiting one left alone`,
    )
    .option('--missing', 'also rows with neither a job nor an outcome (their jobs were removed from outside)')
    .option(
      '--force',
      'also rows that cannot succeed unchanged (invalid, rejected), and not_found or ambiguous rows whose address the registry already answered',
    )
    .option('--input <file>', 'the batch input, when it is no longer where it was loaded from')
    .option('--profile <bank.json>', "the batch's bank profile, when Redis no longer holds it (emptied or restarted): the same bank's")
    .option('--operator <name>', 'who retries, for the audit of operator actions (default: the OS user)')
    .action(async (batch: string, _flags: unknown, cmd: Command) => {
      const opts = cmd.opts<RetryFlags>();
      checkBatch(batch);
      const env = context.environment();
      const outcomes: Outcome[] = opts.outcome ?? (opts.missing ? [] : [...DEFAULT_RETRY_OUTCOMES]);
      const profile = opts.profile === undefined ? undefined : { file: opts.profile, profile: await loadProfile(opts.profile) };
      const { summary, workers } = await withDatabase(env, (db) =>
        withRedis(env, async (redis) => {
          await refuseOtherGateway(db, env);
          const summary = await retryBatch({
            redis,
            keys: env.keys,
            db,
            batch,
            outcomes,
            missing: opts.missing,
            force: opts.force,
            // What the registry would be asked now: a not_found row asked otherwise (a better reading of its address) goes again.
            registryQuery: (deal) => describeQuery(suggestQuery(deal)),
            input: opts.input,
            ...(profile && { profile }),
            logger: env.logger,
          });
          await recordAction(db, {
            who: commandOperator(opts.operator),
            action: 'retry',
            batch,
            detail: `${[...outcomes, ...(opts.missing ? ['missing'] : [])].join(', ')}${opts.force ? ' (--force)' : ''}: ${summary.requeued} sent around again, ${summary.reconciled} found in the news feed, ${summary.unchanged.length} unchanged, ${summary.selected} selected`,
          });
          return { summary, workers: await countWorkers(redis, env) };
        }),
      );
      const what = [...outcomes, ...(opts.missing ? ['missing'] : [])].join(', ');
      console.log(
        `batch ${batch}: ${rows(summary.requeued)} sent around again (${what}); ${summary.reconciled} found in the news feed; ${summary.alreadyGoing} already on their way; ${summary.stillInvalid} still invalid; ${summary.selected} selected${opts.missing ? ` (${summary.missing} missing)` : ''}${summary.unchanged.length > 0 ? `; ${summary.unchanged.length} unchanged, not sent again (--force sends them)` : ''}`,
      );
      for (const row of summary.unchanged.slice(0, UNCHANGED_SHOWN)) console.log(`  ${describeUnchanged(row)}`);
      if (summary.unchanged.length > UNCHANGED_SHOWN)
        console.log(
          `  and ${summary.unchanged.length - UNCHANGED_SHOWN} more unchanged rows: realty-batch results ${batch} --attention <file> lists every row that needs a person`,
        );
      if (summary.requeued > 0 && workers === 0) {
        console.error(
          `realty-batch: no worker is running on this queue: the ${rows(summary.requeued)} sent again wait until \`realty-batch work\` (or a \`run\`) is started.`,
        );
      }
    });
}

/** The unchanged rows said one per line, at most this many (a batch of thousands lists them in its attention file). */
const UNCHANGED_SHOWN = 100;

/** Workers connected to the deals queue right now; undefined when Redis will not say (CLIENT LIST refused). */
async function countWorkers(redis: RedisClient, env: Env): Promise<number | undefined> {
  const queue = openQueue(redis, env.keys);
  try {
    return await queue.getWorkersCount();
  } catch {
    return undefined;
  } finally {
    await queue.close();
  }
}
