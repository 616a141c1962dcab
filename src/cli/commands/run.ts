/** `realty-batch run <file> --profile <bank.json>`: load, process in this process, write the results file. */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { requireGateway, type Config, type Lang } from '../../config.js';
import { describeMissing } from '../../batch/missing-rows.js';
import { parseDeadline } from '../../batch/deadline.js';
import { loadProfile, type BankProfile } from '../../input/profile.js';
import { requireNoEviction } from '../../redis/connection.js';
import { type CliContext } from '../environment.js';
import { LANG_HELP, langFlag } from '../flags.js';
import { onShutdownSignals } from '../shutdown.js';
import { addInputOptions, checkBatch, readingOptions, type InputFlags, defaultResultsPath } from '../input-options.js';
import { printCounts, printLoad, rows } from '../print.js';
import { checkGatewayReachable } from '../gateway-check.js';
import { createProgress } from '../progress.js';
import { formatDuration, formatRate } from '../progress-format.js';
import type { RunOptions, RunResult } from '../../pipeline/run-batch.js';
import type { WorkerSettings } from '../../worker/worker-settings.js';
import { withBoundedHeap } from '../heap-growth.js';
import { resumeAfterRefusedSession } from '../session-pause.js';
import { bindToGateway, withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';
import { describeFollowingFromNow } from '../../feed/states-age.js';
import { addWorkerOptions, dealWorkerSettings, type WorkerFlags } from '../worker-options.js';

export interface RunFlags extends InputFlags, WorkerFlags {
  profile: string;
  out?: string;
  batch?: string;
  excel?: boolean;
  attention?: string;
  attentionAsInput?: boolean;
  lang?: Lang;
  deadline?: string;
}

export function registerRunCommand(program: Command, context: CliContext): Command {
  const command = program
    .command('run')
    .description('load a file, process every deal with in-process workers, write the results file')
    .argument('<file>', 'the deals export (CSV, JSON or JSON Lines)')
    .requiredOption('--profile <bank.json>', 'the bank profile (encumbrancer and representative)')
    .option('--out <results>', 'the results file (.csv, or .jsonl); default <file stem>.results.csv beside the input')
    .option('--batch <id>', 'batch id; default <file stem>-<12 hex of its sha256>, so the same file resumes its batch')
    .option('--excel', 'write the results for Russian Excel (BOM, ";", CRLF); the default when the profile says "excel": true')
    .option('--no-excel', 'write the results as UTF-8 with "," even when the profile says "excel": true')
    .option('--attention <file>', "rows that need a person: row, outcome, hint and errors, then the input's own columns")
    .option('--attention-as-input', "write the attention file in the input's own delimiter, encoding and line ending, not Russian Excel's")
    .option('--lang <ru|en>', LANG_HELP, langFlag)
    .option(
      '--deadline <when>',
      'stop waiting then: a time (2026-11-25T06:00, local unless it names a zone), a clock time (06:00, the next one) or a duration (45m, 2h, 90s); unfinished rows keep their jobs and are written pending, exit 3',
    );
  return addWorkerOptions(addInputOptions(command)).action(async (file: string, _flags: unknown, cmd: Command) => {
    const opts = cmd.opts<RunFlags>();
    checkBatch(opts.batch);
    // Refused before anything is read or sent; a duration counts from the command's start.
    const deadline = opts.deadline === undefined ? undefined : parseDeadline(opts.deadline);
    const env = context.environment();
    const gateway = requireGateway(env.config);
    const reading = await readingOptions(opts);
    const profile = await loadProfile(opts.profile);
    const settings = runSettings(file, opts, reading, { profile, deadline, config: env.config });
    const { worker } = settings;
    // A wrong REALTY_API_URL stops here in one sentence, before anything is opened or loaded.
    await checkGatewayReachable(gateway.apiUrl, worker.timeoutMs);
    // Signals are ours from the start: a SIGTERM while connecting must not kill the process raw.
    const shutdown = onShutdownSignals();
    const result = await withDatabase(env, (db) =>
      withRedis(
        env,
        async (redis) => {
          await requireNoEviction(redis, env.config.redis);
          await bindToGateway(db, env, gateway);

          // Loaded when run, as every command's own heavy parts (program.ts).
          const [{ openGatewaySession }, { runBatch }, { createDealProcessor }] = await Promise.all([
            import('../gateway-session.js'),
            import('../../pipeline/run-batch.js'),
            import('../../../jobs/deal.js'),
          ]);
          // Logged in (or the fleet's session taken) before anything is loaded: a refused login stops here.
          const session = await openGatewaySession(gateway, { redis, keys: env.keys, timeoutMs: worker.timeoutMs, logger: env.logger });
          // The first line: on a terminal it opens the log file, whose name then comes before the bars.
          env.logger.info({ file, batch: opts.batch }, 'run started');
          const loading = createProgress('load', { unit: 'bytes', logger: env.logger });
          const progress = createProgress('run ', { unit: 'rows', logger: env.logger });
          try {
            const ran = await runBatch({
              file,
              profile,
              batch: opts.batch,
              redis,
              keys: env.keys,
              db,
              logger: env.logger,
              apiUrl: gateway.apiUrl,
              session,
              processor: createDealProcessor,
              ...settings,
              signal: shutdown.signal,
              // The process is the CLI's: its V8 settings bound the load's heap.
              aroundLoad: withBoundedHeap,
              // A queue this project paused for a refused session resumes with a new run.
              onQueueOpen: (queue, log) =>
                resumeAfterRefusedSession({ redis, keys: env.keys, queue, logger: log, resumedBy: 'for this run' }),
              onLoadProgress: ({ rows, bytes, size }) => loading.update({ value: bytes, total: size, rows }),
              onProgress: (done, total, waiting) => {
                loading.stop();
                progress.update({ value: done, total, rows: done, waiting });
              },
            });
            // This process followed the feed until now: who does from now on (states go stale without one).
            return { ...ran, following: await describeFollowingFromNow(redis, env.keys) };
          } finally {
            loading.stop();
            progress.stop();
          }
        },
        { failFast: false },
      ),
    );
    printRun(result, resolve(opts.profile));
    context.setExitCode(result.exitCode);
  });
}

/**
 * The run's settings in their groups, from its flags and the environment, resolved once: the
 * CLI's own defaults (the results file beside the input, Excel when the profile says so, the
 * locale's language) here, the worker's from its flags (worker-options.ts), the rest in runBatch.
 */
function runSettings(
  file: string,
  opts: RunFlags,
  { kind, filesRoot, again, rejects, ...reading }: Awaited<ReturnType<typeof readingOptions>>,
  { profile, deadline, config }: { profile: BankProfile; deadline: number | undefined; config: Config },
): Pick<RunOptions, 'reading' | 'load' | 'waiting' | 'output'> & { worker: WorkerSettings } {
  return {
    reading,
    load: { kind, filesRoot, again, profileFile: resolve(opts.profile), resubmit: opts.resubmit, retentionMs: config.retentionMs },
    worker: dealWorkerSettings(opts),
    waiting: { deadline },
    output: {
      out: opts.out ?? defaultResultsPath(file),
      rejects,
      excel: opts.excel ?? profile.excel,
      attention: opts.attention,
      attentionAsInput: opts.attentionAsInput,
      lang: opts.lang ?? config.lang,
    },
  };
}

/** The run's summary on stdout; why it stopped early, if it did, on stderr. */
function printRun(result: RunResult & { following: string }, profile: string): void {
  printLoad(result.load);
  printCounts(result.batch, result.results.counts);
  // A header and no record: a quiet night, not a broken export (docs/operations.md).
  if (result.load.read === 0) console.log(`no deals: ${result.load.file} holds no record; nothing was sent`);
  console.log(`results: ${result.results.file} (${rows(result.results.rows)})`);
  // Who keeps the states fresh once this run exits (a summary line, not an error).
  console.log(`feed: ${result.following}`);
  if (result.results.duplicates > 0)
    console.error(
      `realty-batch: ${rows(result.results.duplicates)} ${result.results.duplicates === 1 ? 'has' : 'have'} a deal with two docflows at the gateway (DUPLICATE_DOCFLOW, otherDocflowId in the results file): cancel one of each pair at the gateway (realty-batch status ${result.batch} lists them)`,
    );
  console.log(`time: ${formatDuration(result.pace.ms)}, ${formatRate(result.pace.rows, result.pace.ms)}`);
  if (result.attention)
    console.log(
      `attention: ${result.attention.file} (${rows(result.attention.rows)} ${result.attention.rows === 1 ? 'needs' : 'need'} a person)`,
    );
  if (result.stoppedBecause === 'session')
    console.error(
      'realty-batch: the gateway refused the session (401); unfinished rows are pending. Set a valid REALTY_SESSION_ID (or REALTY_LOGIN, REALTY_PASSWORD and REALTY_ACCOUNT_ID) and run again with the same --batch.',
    );
  if (result.stoppedBecause === 'paused')
    console.error(
      `realty-batch: the queue was paused by someone (the dashboard or an operator); unfinished rows are pending. Resume it and run again with --batch ${result.batch}.`,
    );
  if (result.stoppedBecause === 'signal')
    console.error(`realty-batch: stopped by a signal; unfinished rows are pending. Run again with --batch ${result.batch} to finish them.`);
  if (result.stoppedBecause === 'deadline') {
    const waiting = result.waiting?.count ?? 0;
    const pending = result.results.counts.pending;
    console.error(
      `realty-batch: the --deadline came with ${rows(pending)} pending` +
        (waiting > 0 ? ` (${waiting} waiting for a retry, the next at ${new Date(result.waiting!.nextAt!).toISOString()})` : '') +
        `; their jobs stay in the queue: realty-batch work (or run again with --batch ${result.batch}) finishes them, ` +
        `realty-batch status ${result.batch} says why each waits, realty-batch results ${result.batch} writes the file again.`,
    );
  }
  if (result.stoppedBecause === 'missing' && result.missing)
    console.error(`realty-batch: ${describeMissing(result.batch, result.missing, profile)}; then run again with --batch ${result.batch}.`);
}
