/**
 * `realty-batch track`: follows the gateway's news feed for the whole fleet, alone (every
 * `work` and `run` does the same unless `--no-track`): one process at a time follows,
 * the others stand by and take over within seconds when it stops.
 */
import type { Command } from 'commander';
import { requireGateway } from '../../config.js';
import { DEFAULT_FEED_POLL_MS, startFeedFollower } from '../../feed/follower.js';
import { requireNoEviction } from '../../redis/connection.js';
import { type CliContext } from '../environment.js';
import { positiveInt } from '../flags.js';
import { aborted, onShutdownSignals } from '../shutdown.js';
import { commandOperator, recordAction } from '../../db/operator-actions.js';
import { checkGatewayReachable } from '../gateway-check.js';
import { bindToGateway, withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';

export interface TrackFlags {
  pollMs: number;
  timeoutMs: number;
  resetCursor?: boolean;
  operator?: string;
}

export function registerTrackCommand(program: Command, context: CliContext): Command {
  return program
    .command('track')
    .description("follow the gateway's news feed for the fleet (lost answers found, deals' docflows recorded) until SIGINT/SIGTERM")
    .option('--poll-ms <ms>', 'how often the feed is read once it has nothing new', positiveInt('--poll-ms'), DEFAULT_FEED_POLL_MS)
    .option('--timeout-ms <ms>', 'per gateway request', positiveInt('--timeout-ms'), 30_000)
    .option(
      '--reset-cursor',
      "forget the feed's cursor (the gateway refuses it, or it was lost) and exit: the next follower starts from now",
    )
    .option('--operator <name>', 'who resets the cursor, for the audit of operator actions (default: the OS user)')
    .action(async (_flags: unknown, cmd: Command) => {
      const opts = cmd.opts<TrackFlags>();
      const env = context.environment();
      if (opts.resetCursor) {
        await withDatabase(env, async (db) => {
          await db.kysely.deleteFrom('feed').execute();
          await recordAction(db, {
            who: commandOperator(opts.operator),
            action: 'track --reset-cursor',
            detail: "the news feed's cursor forgotten: the next follower starts from now",
          });
        });
        console.log(
          "the news feed's cursor is forgotten: the next follower starts from now. A try made before now whose answer was lost can no longer be found in the feed: its row ends ERR_UNCERTAIN; check the gateway and answer with realty-batch ledger <dealId> --resolve <docflowId> (or --resolve-none).",
        );
        return;
      }
      const gateway = requireGateway(env.config);
      // A wrong REALTY_API_URL stops the follower at its start in one sentence.
      await checkGatewayReachable(gateway.apiUrl, opts.timeoutMs);
      const shutdown = onShutdownSignals();
      await withDatabase(env, (db) =>
        withRedis(
          env,
          async (redis) => {
            await requireNoEviction(redis, env.config.redis);
            await bindToGateway(db, env, gateway);

            // Loaded when run, as every command's own heavy parts (program.ts).
            const { withGatewayClient } = await import('../gateway-session.js');
            const session = { redis, keys: env.keys, timeoutMs: opts.timeoutMs, logger: env.logger, connections: 2 };
            await withGatewayClient(gateway, session, async (client) => {
              const follower = startFeedFollower({
                redis,
                keys: env.keys,
                db,
                client,
                logger: env.logger,
                pollMs: opts.pollMs,
                dedicated: true,
              });
              env.logger.info({ pollMs: opts.pollMs }, 'track started: following the news feed when no other process of the fleet does');
              await aborted(shutdown.signal);
              await follower.close();
            });
            env.logger.info('track stopped');
          },
          { failFast: false },
        ),
      );
    });
}
