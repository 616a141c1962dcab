/**
 * `realty-batch cancel|suspend|resume <batch> (--rows 3,7 | --deals <file> | --duplicates)
 * --cause <text> [--input <file>] [--document <file.pdf>]`: an action_request for each chosen
 * docflow of the batch, at most once per docflow and action (src/followups/actions.ts). And what
 * `answer` shares with them: the batch, its bank and profile, a client of the gateway and a
 * follower of the news feed for the command's length.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { createBatchStore, noSuchBatch, type BatchMeta } from '../../batch/batch-store.js';
import { requireGateway, TUNABLES, type Gateway } from '../../config.js';
import type { Database } from '../../db/database.js';
import { commandOperator } from '../../db/operator-actions.js';
import { UsageError } from '../../errors.js';
import { feedStates, waitForFeedPast, withFeedFollower } from '../../followups/feed-watch.js';
import { batchParents, type ParentRow } from '../../followups/batch-parents.js';
import { actOnBatch, readDealIds, type ActionLine, type ActionSelection } from '../../followups/actions.js';
import type { ActionType } from '../../followups/followup-ledger.js';
import type { SendContext } from '../../followups/send-follow-up.js';
import { loadProfile, type BankProfile } from '../../input/profile.js';
import type { RealtyClient } from '../../realty/client.js';
import { nonNegativeInt, onShutdownSignals, positiveInt, type CliContext, type Env } from '../common.js';
import { checkBatch } from '../input-options.js';
import { bindToGateway, withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';

/** The flags every follow-up command takes. */
export interface FollowUpFlags {
  profile?: string;
  timeoutMs: number;
  feedLagMs: number;
  feedWaitMs: number;
  track: boolean;
  concurrency: number;
  operator?: string;
  json?: boolean;
}

export function followUpOptions(command: Command): Command {
  return command
    .option('--profile <bank.json>', "the batch's bank profile, when Redis no longer holds it (emptied or restarted): the same bank's")
    .option('--timeout-ms <ms>', 'per gateway request', positiveInt('--timeout-ms'), 30_000)
    .option(
      '--feed-lag-ms <ms>',
      'how long after a call its docflow may take to show in the news feed: a call whose answer was lost is sent again only once the feed passed its end plus this',
      nonNegativeInt('--feed-lag-ms'),
      TUNABLES.feedLagMs,
    )
    .option(
      '--feed-wait-ms <ms>',
      'how long to wait for the news feed: before a call (it must be known complete) and after the calls (the states shown are its)',
      nonNegativeInt('--feed-wait-ms'),
      30_000,
    )
    .option('--no-track', 'this process never follows the news feed; another process of the fleet (work, run or track) must')
    .option('--concurrency <n>', 'docflows handled at once', positiveInt('--concurrency'), 4)
    .option('--operator <name>', 'who asks, for the audit of operator actions (default: the OS user)')
    .option('--json', 'print the lines as JSON');
}

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
      // Loaded when run, as every command's own heavy parts (program.ts).
      const { withGatewayClient } = await import('../gateway-session.js');
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

/** `--rows 3,7,12`. */
function rowList(value: string): number[] {
  const rows = value.split(',').map((v) => v.trim());
  if (rows.some((r) => !/^[1-9]\d*$/.test(r)))
    throw new InvalidArgumentError('--rows takes row numbers, 1 and up, separated by commas (3,7,12).');
  return rows.map(Number);
}

interface ActionFlags extends FollowUpFlags {
  rows?: number[];
  deals?: string;
  duplicates?: boolean;
  cause: string;
  input?: string;
  document?: string;
}

const SAID: Record<ActionLine['result'], string> = {
  sent: 'sent',
  sent_before: 'sent before',
  skipped: 'not sent',
  refused: 'not sent',
  lost: 'answer lost',
  waiting: 'not sent',
  needs_lift: 'needs a lift',
};

const DOES: Record<ActionType, string> = {
  cancel: 'cancel the chosen docflows of a batch at the registry (action_request cancel); a cancelled docflow ends in error',
  suspend: 'suspend the processing of the chosen docflows of a batch at the registry (action_request suspend), until resumed',
  resume: 'resume the processing of the chosen docflows of a batch that were suspended (action_request resume)',
};

export function registerActionCommand(program: Command, context: CliContext, action: ActionType): Command {
  const command = program
    .command(action)
    .description(`${DOES[action]}; once per docflow and action, only while it is in processing (sent)`)
    .argument('<batch>', 'batch id')
    .option('--rows <list>', 'the rows whose docflows are acted on: 3,7,12', rowList)
    .option('--deals <file>', 'a file of dealIds, one a line: their docflows are acted on')
    .option(
      '--duplicates',
      action === 'cancel'
        ? "the second docflows the news feed found for the batch's deals: one in processing is cancelled, one waiting for signatures is left unsigned, one registered needs a lift"
        : 'only with cancel',
    )
    .requiredOption('--cause <text>', 'why, in a few words the registry reads')
    .option('--input <file>', "the batch's input, when it is no longer where it was loaded from: the owners who ask are read from it")
    .option(
      '--document <file>',
      'a document the action needs (a PDF or XML; a <file>.sig beside it is its signature), sent with each action',
    );
  return followUpOptions(command).action(async (batch: string, _flags: unknown, cmd: Command) => {
    const opts = cmd.opts<ActionFlags>();
    const chosen = [opts.rows, opts.deals, opts.duplicates].filter((x) => x !== undefined).length;
    if (chosen !== 1) throw new UsageError(`${action} takes one of --rows, --deals and --duplicates.`);
    if (opts.duplicates && action !== 'cancel')
      throw new UsageError('--duplicates goes with cancel: a second docflow of a deal is cancelled, never suspended or resumed.');
    if (opts.cause.trim() === '') throw new UsageError('--cause must say why.');
    const selection: ActionSelection = opts.rows
      ? { rows: opts.rows }
      : opts.deals
        ? { deals: await readDealIds(opts.deals) }
        : { duplicates: true };
    await withFollowUp(context, batch, opts, async (run) => {
      const lines = await actOnBatch({
        ...run.send,
        action,
        cause: opts.cause.trim(),
        meta: run.meta,
        bank: run.bank,
        profile: run.profile,
        parents: run.parents,
        selection,
        ...(opts.input !== undefined && { input: opts.input }),
        ...(opts.document !== undefined && { document: opts.document }),
        baseUrl: run.gateway.apiUrl,
        operator: run.operator,
        concurrency: opts.concurrency,
        retry: { signal: run.signal },
        logger: run.env.logger,
      });
      const sent = lines.filter((l) => l.result === 'sent').length;
      // The registry acted at once: the feed's follower stores the docflows' new states, which `results` writes.
      const fresh = sent === 0 || (await run.feedPastNow());
      if (opts.json) console.log(JSON.stringify({ batch, action, lines, statesFromFeed: fresh }, null, 2));
      else {
        console.log(
          `${action}: ${lines.length} docflows; ${sent} ${action} sent, ${lines.filter((l) => l.result === 'sent_before').length} sent before`,
        );
        for (const l of lines)
          console.log(
            `  row ${l.row} ${l.dealId} (docflow ${l.docflowId || '-'}${l.state ? `, ${l.state}` : ''}): ${SAID[l.result]}${l.actionDocflowId ? ` (action ${l.actionDocflowId})` : ''}: ${l.reason}`,
          );
      }
      if (!fresh)
        console.error(
          `${action}: the news feed was not read past the actions within --feed-wait-ms: results shows the new states once a follower reads them (realty-batch track)`,
        );
      if (lines.some((l) => l.result !== 'sent' && l.result !== 'sent_before')) context.setExitCode(3);
    });
  });
}
