/**
 * `realty-batch ledger <dealId> --profile <bank.json>`: what the ledger holds of one deal
 * (its claim, its try waiting for an answer, its docflow), and an operator's answer for a
 * try the news feed could not tell about (ERR_UNCERTAIN), after checking the gateway:
 * `--resolve <docflowId>` (it has this docflow: the gateway is asked that it does, and that it
 * carries the try's requestId; its state is the gateway's) or `--resolve-none` (it has none:
 * the deal may be sent again, with `realty-batch retry`). Neither while the try may still be
 * answered.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULTS, requireGateway } from '../../config.js';
import { UsageError } from '../../errors.js';
import { loadProfile } from '../../input/profile.js';
import { checkDocflowOfTry, type CheckedDocflow } from '../../ledger/check-docflow.js';
import type { LedgerEntry } from '../../ledger/entry.js';
import { commandOperator, recordAction } from '../../db/operator-actions.js';
import { createLedger, type Ledger } from '../../ledger/ledger.js';
import type { Database } from '../../db/database.js';
import type { RedisClient } from '../../redis/connection.js';
import type { CliContext, Env } from '../environment.js';
import { withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';

export interface LedgerFlags {
  profile?: string;
  json?: boolean;
  resolve?: string;
  state?: 'queued' | 'suspended';
  resolveNone?: boolean;
  operator?: string;
}

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

function describe(entry: LedgerEntry): string {
  const lines = [
    `deal ${entry.dealId} of bank ${entry.bank}: ${entry.state}, requestId ${entry.requestId}, row ${entry.row} of batch ${entry.batch || '(none yet)'}`,
  ];
  if (entry.docflowId)
    lines.push(`  docflow ${entry.docflowId} (${entry.outcome ?? '?'}, ${entry.at ?? '?'}, known from ${entry.via ?? 'answer'})`);
  // The ledger keeps the address as a digest only: the cadastral number names the property. An
  // entry written before entries kept the property has none: the line is left out.
  const cadastralNumber = entry.property?.cadastralNumber;
  if (cadastralNumber) lines.push(`  for the property ${cadastralNumber}`);
  if (entry.state === 'sending') {
    lines.push(
      `  a try began ${iso(entry.tryAt) ?? '?'}${entry.endAt ? ` and ended without an answer ${iso(entry.endAt)}` : ' and has no answer yet'}: the news feed decides whether it made a docflow`,
    );
  }
  return lines.join('\n');
}

function docflowState(value: string): LedgerFlags['state'] {
  if (value !== 'queued' && value !== 'suspended') throw new InvalidArgumentError('--state must be queued or suspended.');
  return value;
}

/** The gateway asked about the docflow an operator names for the deal's try (check-docflow.ts). */
async function askGateway(env: Env, redis: RedisClient, entry: LedgerEntry, docflowId: string): Promise<CheckedDocflow> {
  const gateway = requireGateway(env.config);
  const { withGatewayClient } = await import('../gateway-session.js');
  const options = { redis, keys: env.keys, timeoutMs: DEFAULTS.timeoutMs, logger: env.logger };
  return withGatewayClient(gateway, options, (client) => checkDocflowOfTry(client, entry, docflowId));
}

/** An operator's answer for a try the feed could not tell about: checked at the gateway, written, and recorded. */
async function resolveByHand(a: {
  env: Env;
  db: Database;
  redis: RedisClient;
  ledger: Ledger;
  bank: string;
  dealId: string;
  opts: LedgerFlags;
}): Promise<void> {
  const { env, db, redis, ledger, bank, dealId, opts } = a;
  const before = await ledger.read(bank, dealId);
  const waiting = before && (before.state === 'sending' || before.state === 'idle') ? before : undefined;
  const checked = opts.resolve && waiting ? await askGateway(env, redis, waiting, opts.resolve) : undefined;
  if (checked && opts.state && checked.outcome !== opts.state)
    console.error(`realty-batch: the gateway has docflow ${opts.resolve} ${checked.state}: kept as ${checked.outcome}, not ${opts.state}.`);
  const done = await ledger.resolve(
    bank,
    dealId,
    opts.resolve ? { docflowId: opts.resolve, outcome: checked?.outcome ?? 'queued' } : 'none',
  );
  if (done !== 'resolved') throw await notResolved(done, ledger, bank, dealId, before);
  await recordAction(db, {
    who: commandOperator(opts.operator),
    action: opts.resolve ? 'ledger --resolve' : 'ledger --resolve-none',
    batch: before?.batch || undefined,
    dealId,
    detail: resolveDetail(opts.resolve, checked?.state, before?.requestId),
  });
}

/** Why nothing was resolved, in one sentence. */
async function notResolved(
  done: 'in-flight' | 'not-waiting',
  ledger: Ledger,
  bank: string,
  dealId: string,
  before: LedgerEntry | undefined,
): Promise<UsageError> {
  if (done === 'in-flight')
    return new UsageError(
      `A try of deal ${dealId} began ${iso(before?.tryAt) ?? '?'} and may still be answered; nothing was changed: look again once it has ended (its time-out, or the worker's log).`,
    );
  const entry = await ledger.read(bank, dealId);
  return new UsageError(
    `Deal ${dealId} has no try waiting for an answer (${entry ? `it is ${entry.state}` : 'the ledger has no entry for it'}); nothing was changed.`,
  );
}

/** What the audit keeps of a resolve: the docflow named and its state at the gateway, or none. */
function resolveDetail(docflowId: string | undefined, state: string | undefined, requestId: string | undefined): string {
  return docflowId
    ? `docflow ${docflowId} (${state ?? '?'} at the gateway) named for ${requestId ?? '?'}`
    : `no docflow for ${requestId ?? '?'}: the deal may be sent again`;
}

export function registerLedgerCommand(program: Command, context: CliContext): Command {
  // --profile is checked by the action, not made commander's required option: commander would ask
  // it of `ledger import` too, a subcommand.
  return program
    .command('ledger')
    .description('what the ledger holds of one deal; --resolve an uncertain try by hand once the gateway was checked')
    .argument('<dealId>', "the bank's deal id")
    .option('--profile <bank.json>', 'the bank profile (the ledger is kept per bank); required')
    .option('--json', 'print the entry as one JSON object')
    .option('--resolve <docflowId>', 'the gateway has this docflow for the deal (checked at the gateway: REALTY_API_URL and a session)')
    .option(
      '--state <queued|suspended>',
      "the docflow's state as you saw it (the gateway's own is kept; a different one is said)",
      docflowState,
    )
    .option('--resolve-none', 'the gateway has no docflow for the deal: it may be sent again')
    .option('--operator <name>', 'who resolves, for the audit of operator actions (default: the OS user)')
    .action(async (dealId: string, _flags: unknown, cmd: Command) => {
      const opts = cmd.opts<LedgerFlags>();
      if (!opts.profile) throw new UsageError(`Give the bank profile: realty-batch ledger ${dealId} --profile <bank.json>.`);
      if (opts.resolve && opts.resolveNone) throw new UsageError('Give --resolve <docflowId> or --resolve-none, not both.');
      const env = context.environment();
      const bank = (await loadProfile(opts.profile)).organization.inn;
      const entry = await withDatabase(env, (db) =>
        withRedis(env, async (redis) => {
          const ledger = createLedger(redis, env.keys, db, { timeoutMs: 0, feedLagMs: 0 });
          if (opts.resolve || opts.resolveNone) await resolveByHand({ env, db, redis, ledger, bank, dealId, opts });
          return ledger.read(bank, dealId);
        }),
      );
      if (opts.json) console.log(JSON.stringify(entry ? { ...entry, tryAt: iso(entry.tryAt), endAt: iso(entry.endAt) } : null));
      else
        console.log(
          entry
            ? describe(entry)
            : `deal ${dealId} of bank ${bank}: not in the ledger (never claimed, or its entry is older than REALTY_LEDGER_DAYS)`,
        );
    });
}
