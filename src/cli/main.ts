#!/usr/bin/env node
/**
 * `realty-batch`: thin commands over the library. Each action parses flags,
 * calls one library function and maps its result to output and an exit code.
 */
import { dirname, join, basename, extname } from 'node:path';
import { Command, CommanderError } from 'commander';
import { packageVersion } from '../files/package-root.js';
import { DEFAULTS, requireGateway } from '../config.js';
import { InputError, UsageError } from '../errors.js';
import type { InputEncoding } from '../input/decode.js';
import { parseEncodingFlag } from '../input/decode.js';
import { loadMapping } from '../input/mapping.js';
import { parseDelimiterFlag, parseFormatFlag, type InputFormat } from '../input/open-input.js';
import { loadProfile } from '../input/profile.js';
import { DEFAULT_RETRY_OUTCOMES, retryBatch } from '../batch/retry-batch.js';
import { defaultBatchId } from '../batch/batch-id.js';
import { exitCodeFor } from '../batch/exit-code.js';
import { runBatch } from './run-batch.js';
import { inputFingerprint } from '../input/reading.js';
import { connectRedis, requireNoEviction } from '../redis/connection.js';
import { BATCH_ID } from '../redis/keys.js';
import { loadBatch } from '../batch/load-batch.js';
import { createBatchStore } from '../batch/batch-store.js';
import { writeAttention } from '../results/attention.js';
import { writeResults } from '../results/write-results.js';
import { createDealWorker, DEFAULT_FEED_LAG_MS, DEFAULT_GRACE_MS, DEFAULT_RECONCILE_TIMEOUT_MS } from '../worker/create-worker.js';
import { createDealProcessor } from '../../jobs/deal.js';
import { describeMissing } from '../batch/missing-rows.js';
import type { Outcome } from '../outcomes/types.js';
import { registerTrackCommand } from './track-command.js';
import { registerLedgerCommand } from './ledger-command.js';
import { createTickWorker } from '../schedule/tick-worker.js';
import { createTickProcessor } from '../../jobs/tick.js';
import { aborted, environment, nonNegativeInt, onShutdownSignals, positiveInt, reportError, share, type Env } from './common.js';
import { DEFAULT_BREAKER } from '../worker/circuit-breaker.js';
import { createProgress } from './progress.js';
import { printCounts, printLoad } from './print.js';
import { registerSandboxCommand } from './sandbox-command.js';
import { registerStatusCommand } from './status-command.js';
import { registerScheduleCommand } from './schedule-command.js';
import { registerDashboardCommand } from './dashboard-command.js';

const program = new Command('realty-batch')
  .version(packageVersion(), '-V, --version', 'print the version')
  .description('Submit mortgage registrations (encumbrance_request docflows) in bulk, on BullMQ and Redis.')
  .showHelpAfterError('(add --help for the usage)')
  .exitOverride();

function workerOptions(cmd: Command): Command {
  return cmd
    .option('--concurrency <n>', 'deals processed at once by this process', positiveInt('--concurrency'), DEFAULTS.concurrency)
    .option('--attempts <n>', 'tries per deal for retryable failures (501, 5xx, timeouts)', positiveInt('--attempts'), DEFAULTS.attempts)
    .option('--backoff-ms <ms>', 'first retry delay, doubled each time with jitter', nonNegativeInt('--backoff-ms'), DEFAULTS.backoffMs)
    .option('--timeout-ms <ms>', 'per gateway request', positiveInt('--timeout-ms'), DEFAULTS.timeoutMs)
    .option('--rate <n>', 'gateway requests per second across all workers (default: no limit)', positiveInt('--rate'))
    .option('--lock-ms <ms>', 'a job of a worker that stops answering is taken over after this long', positiveInt('--lock-ms'), 30_000)
    .option('--breaker-threshold <share>', 'share of 501/5xx/timeouts among recent calls that opens the circuit breaker', share('--breaker-threshold'), DEFAULT_BREAKER.threshold)
    .option('--breaker-cooldown-ms <ms>', 'how long an open breaker waits before its probe', positiveInt('--breaker-cooldown-ms'), DEFAULT_BREAKER.cooldownMs)
    .option('--feed-lag-ms <ms>', "how long after a call the gateway's news feed may take to show its docflow", nonNegativeInt('--feed-lag-ms'), DEFAULT_FEED_LAG_MS)
    .option('--reconcile-timeout-ms <ms>', 'how long past that a row whose answer was lost waits for the feed before it ends ERR_UNCERTAIN', positiveInt('--reconcile-timeout-ms'), DEFAULT_RECONCILE_TIMEOUT_MS)
    .option('--no-track', 'never follow the news feed in this process (another process of the fleet must)');
}

/** The options every worker takes from `workerOptions` and the environment. */
function dealWorkerSettings(opts: Record<string, unknown>, env: Env) {
  return {
    concurrency: opts.concurrency as number,
    attempts: opts.attempts as number,
    backoffMs: opts.backoffMs as number,
    timeoutMs: opts.timeoutMs as number,
    rate: opts.rate as number | undefined,
    lockMs: opts.lockMs as number,
    breaker: { threshold: opts.breakerThreshold as number, cooldownMs: opts.breakerCooldownMs as number },
    feedLagMs: opts.feedLagMs as number,
    reconcileTimeoutMs: opts.reconcileTimeoutMs as number,
    track: opts.track as boolean,
    ledgerMs: env.config.ledgerMs,
  };
}

/** The reading options of `run` and `load` (docs/input-format.md). */
function inputOptions(cmd: Command): Command {
  return cmd
    .option('--format <csv|json|jsonl>', 'input format; default from the extension', parseFormatFlag)
    .option('--encoding <auto|utf8|utf8-bom|windows-1251>', 'input encoding', parseEncodingFlag, 'auto')
    .option('--delimiter <auto|,|;|tab>', 'CSV delimiter', parseDelimiterFlag)
    .option('--mapping <map.json>', "a bank's own headers renamed to fields, and defaults")
    .option('--rejects <file>', 'where refused records go (input format, encoding, delimiter); default <file stem>.rejects.<ext> beside the input')
    .option('--resubmit', 'send deals the ledger says were submitted before');
}

async function readingOptions(opts: { format?: InputFormat; encoding: InputEncoding | 'auto'; delimiter?: string; mapping?: string; rejects?: string }) {
  return {
    format: opts.format,
    encoding: opts.encoding === 'auto' ? undefined : opts.encoding,
    delimiter: opts.delimiter,
    mapping: opts.mapping ? await loadMapping(opts.mapping) : undefined,
    rejects: opts.rejects,
  };
}

function checkBatch(batch: string | undefined): void {
  if (batch !== undefined && !BATCH_ID.test(batch)) {
    throw new UsageError(`--batch ${JSON.stringify(batch)} is not a valid batch id: use letters, digits, '.', '_' or '-' (at most 80).`);
  }
}

workerOptions(
  inputOptions(
    program
      .command('run')
      .description('load a file, process every deal with in-process workers, write the results file')
      .argument('<file>', 'the deals export (CSV, JSON or JSON Lines)')
      .requiredOption('--profile <bank.json>', 'the bank profile (encumbrancer and representative)')
      .option('--out <results>', 'the results file (.csv, or .jsonl); default <file stem>.results.csv beside the input')
      .option('--batch <id>', 'batch id; default <file stem>-<12 hex of its sha256>, so the same file resumes its batch')
      .option('--excel', 'write the results for Russian Excel (BOM, ";", CRLF)')
      .option('--attention <file>', "rows that need a person, in the input's own columns, with outcome, errors and hint"),
  ),
).action(async (file: string, opts) => {
  checkBatch(opts.batch);
  const env = environment();
  const gateway = requireGateway(env.config);
  const reading = await readingOptions(opts);
  const profile = await loadProfile(opts.profile);
  // Signals are ours from the start: a SIGTERM while connecting must not kill the process raw.
  const shutdown = onShutdownSignals();
  const redis = await connectRedis(env.config.redis);
  await requireNoEviction(redis, env.config.redis).catch((err: unknown) => {
    redis.disconnect();
    throw err;
  });
  const loading = createProgress('load', { unit: 'bytes', logger: env.logger });
  const progress = createProgress('run ', { unit: 'rows', logger: env.logger });
  try {
    const out: string = opts.out ?? join(dirname(file), `${basename(file, extname(file))}.results.csv`);
    const result = await runBatch({
      file,
      profile,
      out,
      batch: opts.batch,
      redis,
      keys: env.keys,
      logger: env.logger,
      ...gateway,
      ...dealWorkerSettings(opts, env),
      ...reading,
      resubmit: opts.resubmit,
      excel: opts.excel,
      attention: opts.attention,
      retentionMs: env.config.retentionMs,
      signal: shutdown.signal,
      onLoadProgress: ({ rows, bytes, size }) => loading.update({ value: bytes, total: size, rows }),
      onProgress: (done, total) => {
        loading.stop();
        progress.update({ value: done, total, rows: done });
      },
    });
    progress.stop();
    printLoad(result.load);
    printCounts(result.batch, result.results.counts);
    console.log(`results: ${result.results.file} (${result.results.rows} rows)`);
    if (result.attention) console.log(`attention: ${result.attention.file} (${result.attention.rows} rows need a person)`);
    if (result.stoppedBecause === 'session') console.error('realty-batch: the gateway refused the session (401); unfinished rows are pending. Set a valid REALTY_SESSION_ID and run again with the same --batch.');
    if (result.stoppedBecause === 'paused') console.error(`realty-batch: the queue was paused by someone (the dashboard or an operator); unfinished rows are pending. Resume it and run again with --batch ${result.batch}.`);
    if (result.stoppedBecause === 'signal') console.error(`realty-batch: stopped by a signal; unfinished rows are pending. Run again with --batch ${result.batch} to finish them.`);
    if (result.stoppedBecause === 'missing' && result.missing) console.error(`realty-batch: ${describeMissing(result.batch, result.missing)}; then run again with --batch ${result.batch}.`);
    process.exitCode = result.exitCode;
  } finally {
    loading.stop();
    progress.stop();
    redis.disconnect();
  }
});

inputOptions(
  program
    .command('load')
    .description('validate a file and enqueue its deals into a batch (no processing)')
    .argument('<file>', 'the deals export (CSV, JSON or JSON Lines)')
    .requiredOption('--profile <bank.json>', 'the bank profile')
    .option('--batch <id>', 'batch id; default <file stem>-<12 hex of its sha256>, so the same file resumes its batch')
    .option('--dry-run', 'validate and write the rejects file; enqueue nothing')
    .option('--json', 'print the summary as one JSON object'),
).action(async (file: string, opts) => {
  checkBatch(opts.batch);
  const env = environment();
  const reading = await readingOptions(opts);
  const profile = await loadProfile(opts.profile);
  const fingerprint = await inputFingerprint(file, reading);
  const batch: string = opts.batch ?? defaultBatchId(file, fingerprint);
  const redis = await connectRedis(env.config.redis, { failFast: true });
  const progress = createProgress('load', { unit: 'bytes', logger: env.logger });
  try {
    if (!opts.dryRun) await requireNoEviction(redis, env.config.redis);
    const summary = await loadBatch({
      file,
      fingerprint,
      batch,
      profile,
      redis,
      keys: env.keys,
      logger: env.logger,
      ...reading,
      resubmit: opts.resubmit,
      dryRun: opts.dryRun,
      retentionMs: env.config.retentionMs,
      onProgress: ({ rows, bytes, size }) => progress.update({ value: bytes, total: size, rows }),
    });
    progress.stop();
    if (opts.json) console.log(JSON.stringify(summary));
    else printLoad(summary);
    process.exitCode = summary.invalid > 0 ? 3 : 0;
  } finally {
    progress.stop();
    redis.disconnect();
  }
});

workerOptions(
  program
    .command('work')
    .description('a long-running worker: processes deals of every batch until SIGINT/SIGTERM (a second signal exits at once)')
    .option('--grace-ms <ms>', 'on a signal, how long active jobs may take to finish', nonNegativeInt('--grace-ms'), DEFAULT_GRACE_MS),
).action(async (opts) => {
  const env = environment();
  const gateway = requireGateway(env.config);
  const shutdown = onShutdownSignals();
  const redis = await connectRedis(env.config.redis);
  await requireNoEviction(redis, env.config.redis).catch((err: unknown) => {
    redis.disconnect();
    throw err;
  });
  const dealWorker = createDealWorker({ processor: createDealProcessor, ...gateway, connection: redis, keys: env.keys, logger: env.logger, ...dealWorkerSettings(opts, env) });
  if ((await redis.get(env.keys.pauseReason)) === 'session') {
    await redis.del(env.keys.pauseReason);
    await dealWorker.queue.resume();
    env.logger.warn('the queue was paused for a refused session; resumed with this worker\'s session');
  }
  // The ticks of nightly schedules (realty-batch schedule) run here too.
  const tickWorker = createTickWorker({ processor: createTickProcessor, connection: redis, keys: env.keys, logger: env.logger, signal: shutdown.signal });
  env.logger.info({ concurrency: opts.concurrency }, 'worker started');
  await aborted(shutdown.signal);
  env.logger.info({ graceMs: opts.graceMs }, 'stopping: no new jobs; active ones may finish');
  await Promise.all([dealWorker.close(opts.graceMs), tickWorker.close()]);
  redis.disconnect();
  env.logger.info('worker stopped');
});

program
  .command('results')
  .description("(re)write a batch's results file from the stored outcomes, at any time")
  .argument('<batch>', 'batch id')
  .requiredOption('--out <file>', 'the results file (.csv, or .jsonl)')
  .option('--excel', 'write for Russian Excel (BOM, ";", CRLF)')
  .option('--attention <file>', "rows that need a person, in the input's own columns, with outcome, errors and hint")
  .option('--input <file>', 'the batch input, when it is no longer where it was loaded from (for --attention)')
  .action(async (batch: string, opts) => {
    checkBatch(batch);
    const env = environment();
    const redis = await connectRedis(env.config.redis, { failFast: true });
    try {
      const meta = await createBatchStore(redis, env.keys).get(batch);
      if (!meta) throw new UsageError(`There is no batch ${batch} in Redis (realty-batch status lists the batches).`);
      if (meta.state === 'failed') throw new InputError(`Batch ${batch} did not load completely (${meta.error ?? 'unknown error'}); nothing of it was sent.`);
      if (meta.total === undefined) throw new UsageError(`Batch ${batch} is still loading: its total is not known yet.`);
      const summary = await writeResults({ redis, keys: env.keys, batch, total: meta.total, out: opts.out, excel: opts.excel });
      printCounts(batch, summary.counts);
      console.log(`results: ${summary.file} (${summary.rows} rows)`);
      if (opts.attention) {
        const attention = await writeAttention({ redis, keys: env.keys, batch, out: opts.attention, input: opts.input });
        console.log(`attention: ${attention.file} (${attention.rows} rows need a person)`);
      }
      process.exitCode = exitCodeFor(summary.counts);
    } finally {
      redis.disconnect();
    }
  });

program
  .command('retry')
  .description('send the rows of a batch that ended with given outcomes around again (a running `work` processes them)')
  .argument('<batch>', 'batch id')
  .option('--outcome <outcome...>', `outcomes to retry (default ${DEFAULT_RETRY_OUTCOMES.join(' and ')}, unless only --missing is given)`)
  .option('--missing', 'also rows with neither a job nor an outcome (their jobs were removed from outside)')
  .option('--force', 'also rows that cannot succeed unchanged (invalid, rejected)')
  .option('--input <file>', 'the batch input, when it is no longer where it was loaded from')
  .action(async (batch: string, opts) => {
    checkBatch(batch);
    const env = environment();
    const redis = await connectRedis(env.config.redis, { failFast: true });
    try {
      const outcomes: Outcome[] = opts.outcome ?? (opts.missing ? [] : [...DEFAULT_RETRY_OUTCOMES]);
      const summary = await retryBatch({ redis, keys: env.keys, batch, outcomes, missing: opts.missing, force: opts.force, input: opts.input, logger: env.logger });
      const what = [...outcomes, ...(opts.missing ? ['missing'] : [])].join(', ');
      console.log(
        `batch ${batch}: ${summary.requeued} rows sent around again (${what}); ${summary.reconciled} found in the news feed; ${summary.alreadyGoing} already on their way; ${summary.stillInvalid} still invalid; ${summary.selected} selected${opts.missing ? ` (${summary.missing} missing)` : ''}`,
      );
    } finally {
      redis.disconnect();
    }
  });

registerStatusCommand(program);
registerTrackCommand(program);
registerLedgerCommand(program);
registerScheduleCommand(program);
registerDashboardCommand(program);
registerSandboxCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0 ? 0 : 2;
  } else {
    // Unknown-argument and missing-argument errors are CommanderErrors (exit 2); the rest are ours.
    process.exitCode = reportError(err);
  }
}
