/**
 * `realty-batch track`: follows the gateway's news feed for the whole fleet, alone (every
 * `work` and `run` does the same unless `--no-track`): one process at a time follows,
 * the others stand by and take over within seconds when it stops.
 */
import type { Command } from 'commander';
import { requireGateway } from '../config.js';
import { DEFAULT_FEED_POLL_MS, startFeedFollower } from '../feed/follower.js';
import { connectRedis, requireNoEviction } from '../queue/connection.js';
import { createRealtyClient } from '../realty/client.js';
import { aborted, environment, onShutdownSignals, positiveInt } from './common.js';

export function registerTrackCommand(program: Command): void {
  program
    .command('track')
    .description("follow the gateway's news feed for the fleet (lost answers found, deals' docflows recorded) until SIGINT/SIGTERM")
    .option('--poll-ms <ms>', 'how often the feed is read once it has nothing new', positiveInt('--poll-ms'), DEFAULT_FEED_POLL_MS)
    .option('--timeout-ms <ms>', 'per gateway request', positiveInt('--timeout-ms'), 30_000)
    .action(async (opts: { pollMs: number; timeoutMs: number }) => {
      const env = environment();
      const gateway = requireGateway(env.config);
      const shutdown = onShutdownSignals();
      const redis = await connectRedis(env.config.redis);
      try {
        await requireNoEviction(redis, env.config.redis);
        const client = createRealtyClient({ baseUrl: gateway.apiUrl, sessionId: gateway.sessionId, timeoutMs: opts.timeoutMs, connections: 2 });
        const follower = startFeedFollower({ redis, keys: env.keys, client, logger: env.logger, ledgerMs: env.config.ledgerMs, pollMs: opts.pollMs });
        env.logger.info({ pollMs: opts.pollMs }, 'track started: following the news feed when no other process of the fleet does');
        await aborted(shutdown.signal);
        await follower.close();
        await client.close();
        env.logger.info('track stopped');
      } finally {
        redis.disconnect();
      }
    });
}
