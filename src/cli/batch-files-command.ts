/**
 * What the commands that work on a batch's docflows at the gateway through a folder share
 * (`documents`, `to-sign`, `sign`): `<batch> --dir <d> [--concurrency N] [--timeout-ms N]`,
 * the batch checked, Redis and a client of the gateway opened and always closed, and
 * SIGINT/SIGTERM stopping the retries' waits.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { createBatchStore, noSuchBatch } from '../batch/batch-store.js';
import { requireGateway } from '../config.js';
import { UsageError } from '../errors.js';
import type { BatchFilesOptions } from '../results/docflow-files.js';
import { type CliContext, type Env } from './environment.js';
import { positiveInt } from './flags.js';
import { onShutdownSignals } from './shutdown.js';
import { checkBatch } from './input-options.js';
import { withDatabase } from './with-database.js';
import { withRedis } from './with-redis.js';

interface BatchFilesFlags {
  dir: string;
  concurrency: number;
  timeoutMs: number;
  manifest?: string;
}

export interface BatchFilesCommand {
  name: string;
  description: string;
  /** What `--dir` holds. */
  dir: string;
  /** Said on the first SIGINT or SIGTERM: what the command still finishes. */
  stopping: string;
  /** Whether the command writes a manifest, and so takes `--manifest <file>` for a person's copy of it. */
  manifest?: boolean;
}

/** `--manifest`: a workbook or a CSV, named so. */
function manifestPath(value: string): string {
  if (!/\.(xlsx|csv)$/i.test(value)) throw new InvalidArgumentError('--manifest must name a .xlsx or .csv file.');
  return value;
}

/** Registers the command; `run` gets the library's options ready, and its environment. */
export function registerBatchFilesCommand(
  program: Command,
  context: CliContext,
  spec: BatchFilesCommand,
  run: (options: Required<Pick<BatchFilesOptions, 'concurrency'>> & BatchFilesOptions, env: Env) => Promise<void>,
): Command {
  const command = program
    .command(spec.name)
    .description(spec.description)
    .argument('<batch>', 'batch id')
    .requiredOption('--dir <dir>', spec.dir)
    .option('--concurrency <n>', 'docflows handled at once', positiveInt('--concurrency'), 4)
    .option('--timeout-ms <ms>', 'per gateway request (a download: between two chunks)', positiveInt('--timeout-ms'), 30_000);
  if (spec.manifest)
    command.option(
      '--manifest <file>',
      "also write the manifest for a person to <file>: an Excel workbook when it ends in .xlsx (ids as text cells), else a CSV in Russian Excel's form",
      manifestPath,
    );
  return command.action(async (batch: string, _flags: unknown, cmd: Command) => {
    const opts = cmd.opts<BatchFilesFlags>();
    checkBatch(batch);
    const env = context.environment();
    const gateway = requireGateway(env.config);
    const shutdown = onShutdownSignals(spec.stopping);
    await withDatabase(env, (db) =>
      withRedis(env, async (redis) => {
        const meta = await createBatchStore(redis, env.keys, db).get(batch);
        if (!meta) throw noSuchBatch(redis, env.keys, batch);
        const total = meta.total;
        if (total === undefined) throw new UsageError(`Batch ${batch} is still loading: its total is not known yet.`);
        // Loaded when run, as every command's own heavy parts (program.ts).
        const { withGatewayClient } = await import('./gateway-session.js');
        const session = { redis, keys: env.keys, timeoutMs: opts.timeoutMs, logger: env.logger, connections: opts.concurrency };
        await withGatewayClient(gateway, session, (client) =>
          run(
            {
              redis,
              keys: env.keys,
              db,
              client,
              batch,
              total,
              dir: opts.dir,
              ...(opts.manifest !== undefined && { manifestCopy: opts.manifest }),
              concurrency: opts.concurrency,
              logger: env.logger,
              retry: { signal: shutdown.signal },
            },
            env,
          ),
        );
      }),
    );
  });
}
