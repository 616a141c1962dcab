/** `realty-batch status [<batch>] [--json]`: a batch at a glance, or the recent batches. */
import type { Command } from 'commander';
import { createBatchStore } from '../../batch/batch-store.js';
import { batchStatus, WAITING_ROWS, type BatchStatus } from '../../batch/batch-status.js';
import { needsAttention } from '../../batch/exit-code.js';
import { DEFAULT_KIND, KINDS } from '../../docflows/registry.js';
import { describeMissing } from '../../batch/missing-rows.js';
import { emptyCounts, SUBMITTED_OUTCOMES } from '../../domain/outcome.js';
import { describeRegistered, describeStates } from '../../outcomes/state-tally.js';
import type { RedisClient } from '../../redis/connection.js';
import type { CliContext, Env } from '../environment.js';
import { printCounts, rows } from '../print.js';
import type { Database } from '../../db/database.js';
import { withDatabase } from '../with-database.js';
import { describeRestore } from '../../ledger/restore.js';
import { withRedis } from '../with-redis.js';
import { readFeedState, type FeedState } from '../../feed/feed-store.js';
import { describeStatesAge, readStatesAge } from '../../feed/states-age.js';
import { lagAllowance } from '../../ledger/feed-lag.js';

/** Waiting rows printed one a line; the rest are counted. */
const WAITING_SHOWN = 20;
/** A delayed job is taken within a moment of its time by a running worker. */
const DUE_SLACK_MS = 5000;

export interface StatusFlags {
  json?: boolean;
}

export function registerStatusCommand(program: Command, context: CliContext): Command {
  return program
    .command('status')
    .description('counts per outcome and per queue state for a batch; without a batch, the recent batches')
    .argument('[batch]', 'batch id')
    .option('--json', 'print JSON: one object for a batch, an array of batches otherwise')
    .action(async (batch: string | undefined, _flags: unknown, cmd: Command) => {
      const opts = cmd.opts<StatusFlags>();
      const env = context.environment();
      const code = await withDatabase(env, (db) =>
        withRedis(env, async (redis) => {
          // Loud, on stderr: --json's stdout stays one JSON value.
          const restored = await describeRestore(db, redis, env.keys);
          if (restored) console.error(`realty-batch: ${restored}`);
          return batch ? printBatch(redis, db, env, batch, opts) : printBatches(redis, db, env, opts).then(() => 0);
        }),
      );
      context.setExitCode(code);
    });
}

async function printBatches(redis: RedisClient, db: Database, env: Env, opts: StatusFlags): Promise<void> {
  const store = createBatchStore(redis, env.keys, db);
  const listed = await store.list(50);
  const metas = (await Promise.all(listed.map(({ id }) => store.get(id)))).filter((m) => m !== undefined);
  if (opts.json)
    console.log(
      JSON.stringify(
        metas.map(({ id, file, createdAt, state, total, loaderDied, type }) => ({
          batch: id,
          type: type || DEFAULT_KIND.type,
          file,
          createdAt,
          state,
          total,
          loaderDied,
        })),
      ),
    );
  else
    for (const m of metas)
      console.log(
        `${m.id}  ${m.createdAt}  ${m.state}${m.loaderDied ? ' (loader died)' : ''}  rows ${m.total ?? '?'}${typeText(m.type)}  ${m.file}`,
      );
}

/** A batch of another type than registrations, as `status` names it: `  lifts (cessation_encumbrance_request)`; '' for registrations. */
function typeText(type: string | undefined): string {
  if (!type || type === DEFAULT_KIND.type) return '';
  return `  ${KINDS.find((k) => k.type === type)?.title ?? 'docflows'} (${type})`;
}

/** `  docflows: mortgage lifts (cessation_encumbrance_request)` under a batch's counts; nothing for registrations. */
function printType(type: string): void {
  const text = typeText(type);
  if (text) console.log(`  docflows:${text.slice(1)}`);
}

/** The rows whose deal has two docflows at the gateway, on stderr: each with both docflows. */
export function printDuplicates(duplicates: BatchStatus['duplicates']): void {
  if (duplicates.length === 0) return;
  console.error(
    `realty-batch: ${rows(duplicates.length)} ${duplicates.length === 1 ? 'has' : 'have'} a deal with two docflows at the gateway (DUPLICATE_DOCFLOW): cancel one of each pair at the gateway`,
  );
  for (const d of duplicates.slice(0, WAITING_SHOWN)) console.error(`  row ${d.row} (${d.dealId}): ${d.docflowId} and ${d.otherDocflowId}`);
  if (duplicates.length > WAITING_SHOWN) console.error(`  and ${duplicates.length - WAITING_SHOWN} more (the results file names each)`);
}

/** "yes", or "registered 28 of 41; 13 never filed" when rows never reached the registry or were refused there. */
function registeredText(status: BatchStatus): string {
  const filed = [...SUBMITTED_OUTCOMES].reduce((sum, o) => sum + (status.outcomes[o] ?? 0), 0);
  const registered = describeRegistered({ total: status.total, filed, states: status.states });
  return registered.whole ? 'yes' : registered.text;
}

/** The feed's lag as the follower measured it (src/ledger/feed-lag.ts). */
function printLag(lag: FeedState['lag']): void {
  if (!lag) return;
  console.log(
    `  news feed lag: ${lag.p99} ms (99th percentile of its last docflows, ${lag.max} ms the largest, measured ${new Date(lag.at).toISOString()}); a try whose answer was lost is judged no sooner than ${lagAllowance(0, lag.p99)} ms after its end, or --feed-lag-ms if longer`,
  );
}

/** 3 when some rows need a person (as every command that reports outcomes), 0 otherwise. */
async function printBatch(redis: RedisClient, db: Database, env: Env, batch: string, opts: StatusFlags): Promise<0 | 3> {
  const status = await batchStatus(redis, env.keys, db, batch, { waitingRows: WAITING_ROWS });
  const exitCode = needsAttention({ ...emptyCounts(), ...status.outcomes }) || status.duplicates.length > 0 ? 3 : 0;
  // Loud, on stderr whatever the form: a deal filed twice is never only a number in a JSON field.
  printDuplicates(status.duplicates);
  const lag = (await readFeedState(db)).lag;
  const age = await readStatesAge(db, redis, env.keys);
  if (opts.json) {
    console.log(JSON.stringify({ ...status, ...(lag && { feedLag: lag }), statesAge: age }));
    return exitCode;
  }
  printCounts(batch, { ...emptyCounts(), ...status.outcomes });
  printType(status.type);
  const queue = Object.entries(status.queue)
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
  console.log(
    `  load: ${status.state}${status.loaderDied ? ' (its loader died: load the same input again to resume)' : ''}; done: ${status.done ? 'yes' : 'no'}; registered: ${status.registered ? registeredText(status) : 'no'}`,
  );
  if (queue) console.log(`  unfinished rows in the queue: ${queue}`);
  const registry = describeStates(status);
  if (registry) console.log(`  at the registry: ${registry}`);
  console.log(`  ${describeStatesAge(age)}`);
  printLag(lag);
  if (status.waiting && status.waiting.count > 0) {
    // A try past due waits for a worker to take it: none runs, or all are busy.
    const due =
      Date.parse(status.waiting.nextTryAt ?? '') < Date.now() - DUE_SLACK_MS ? ' (past due: is a realty-batch work running?)' : '';
    console.log(`  waiting for their next try: ${rows(status.waiting.count)}, the first at ${status.waiting.nextTryAt}${due}`);
    for (const w of status.waiting.rows.slice(0, WAITING_SHOWN))
      console.log(`    row ${w.row} (${w.dealId}): next try ${w.nextTryAt}; ${w.reason}`);
    if (status.waiting.count > WAITING_SHOWN)
      console.log(
        `    and ${status.waiting.count - WAITING_SHOWN} more (realty-batch status ${batch} --json gives the first ${WAITING_ROWS})`,
      );
  }
  if (status.missing > 0)
    console.log(`  missing: ${describeMissing(batch, { count: status.missing, rows: status.missingRows ?? [] }, status.profileLost)}`);
  console.log(
    `  started ${status.startedAt}${status.finishedAt ? `, finished ${status.finishedAt}` : ''}${status.rowsPerSecond ? `, ${status.rowsPerSecond} rows/s` : ''}`,
  );
  return exitCode;
}
