/**
 * What a follow-up command (`answer`, `cancel`, `suspend`, `resume`) opens for its length: the
 * batch, its bank and profile, the database, a client of the gateway and a follower of the news
 * feed. Imported when such a command runs, not when the program starts (program.ts).
 */
import { createBatchStore, noSuchBatch, type BatchMeta } from '../batch/batch-store.js';
import { requireGateway, type Gateway } from '../config.js';
import type { Database } from '../db/database.js';
import { commandOperator } from '../db/operator-actions.js';
import { UsageError } from '../errors.js';
import { feedStates, waitForFeedPast, withFeedFollower } from '../followups/feed-watch.js';
import { batchParents, type ParentRow } from '../followups/batch-parents.js';
import type { SendContext } from '../followups/send-follow-up.js';
import { loadProfile, type BankProfile } from '../input/profile.js';
import type { RealtyClient } from '../realty/client.js';
import { type CliContext, type Env } from './environment.js';
import { onShutdownSignals } from './shutdown.js';
import type { FollowUpFlags } from './follow-up-options.js';
import { checkBatch } from './input-options.js';
import { bindToGateway, withDatabase } from './with-database.js';
import { withRedis } from './with-redis.js';

export interface FollowUpRun {
  env: Env;
  db: Database;
  client: RealtyClient;
  gateway: Gateway;
  meta: BatchMeta & { total: number };
  bank: string;
  profile: BankProfile;
  parents: ParentRow[];
  send: SendContext;
  operator: string;
  signal: AbortSignal;
  /** Waits (at most --feed-wait-ms) until the news feed was read past now: the states it stores are after the calls. */
  feedPastNow(): Promise<boolean>;
  states(docflowIds: readonly string[]): Promise<Map<string, string>>;
}

/** Opens what a follow-up command needs, for the length of `use`. */
export async function withFollowUp(
  context: CliContext,
  batch: string,
  opts: FollowUpFlags,
  use: (run: FollowUpRun) => Promise<void>,
): Promise<void> {
  checkBatch(batch);
  const env = context.environment();
  const gateway = requireGateway(env.config);
  const shutdown = onShutdownSignals('stopping after the calls under way');
  await withDatabase(env, (db) =>
    withRedis(env, async (redis) => {
      const store = createBatchStore(redis, env.keys, db);
      const meta = await store.get(batch);
      if (!meta) throw noSuchBatch(redis, env.keys, batch);
      const total = meta.total;
      if (total === undefined) throw new UsageError(`Batch ${batch} is still loading: its total is not known yet.`);
      const profile = (await store.profile(batch)) ?? (opts.profile === undefined ? undefined : await loadProfile(opts.profile));
      if (!profile) throw new UsageError(`Redis no longer holds the bank profile of batch ${batch}: give it with --profile <bank.json>.`);
      const bank = meta.bank ?? profile.organization.inn;
      if (profile.organization.inn !== bank)
        throw new UsageError(
          `The profile is bank ${profile.organization.inn}'s, and batch ${batch} is bank ${bank}'s: give that bank's profile.`,
        );
      await bindToGateway(db, env, gateway);
      const parents = await batchParents(redis, env.keys, db, batch, total);
      const { withGatewayClient } = await import('./gateway-session.js');
      const session = { redis, keys: env.keys, timeoutMs: opts.timeoutMs, logger: env.logger, connections: opts.concurrency + 2 };
      await withGatewayClient(gateway, session, (client) =>
        withFeedFollower({ redis, keys: env.keys, db, client, logger: env.logger, track: opts.track }, async () =>
          use({
            env,
            db,
            client,
            gateway,
            meta: { ...meta, total },
            bank,
            profile,
            parents,
            send: { db, client, timeoutMs: opts.timeoutMs, feedLagMs: opts.feedLagMs, feedWaitMs: opts.feedWaitMs },
            operator: commandOperator(opts.operator),
            signal: shutdown.signal,
            feedPastNow: async () => waitForFeedPast(db, await db.now(), opts.feedWaitMs),
            states: (ids) => feedStates(db, ids),
          }),
        ),
      );
    }),
  );
}
