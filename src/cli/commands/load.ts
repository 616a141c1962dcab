/** `realty-batch load <file> --profile <bank.json>`: validate a file and enqueue its deals (no processing). */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { defaultBatchId } from '../../batch/batch-id.js';
import { loadProfile } from '../../input/profile.js';
import { requireNoEviction } from '../../redis/connection.js';
import type { Lang } from '../../config.js';
import { type CliContext } from '../environment.js';
import { LANG_HELP, langFlag } from '../flags.js';
import { addInputOptions, checkBatch, readingOptions, type InputFlags } from '../input-options.js';
import { printLoad } from '../print.js';
import { withBoundedHeap } from '../heap-growth.js';
import { createProgress } from '../progress.js';
import { refuseOtherGateway, withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';

export interface LoadFlags extends InputFlags {
  profile: string;
  batch?: string;
  dryRun?: boolean;
  json?: boolean;
  lang?: Lang;
}

export function registerLoadCommand(program: Command, context: CliContext): Command {
  const command = program
    .command('load')
    .description('validate a file and enqueue its deals into a batch (no processing)')
    .argument('<file>', 'the deals export (CSV, JSON or JSON Lines)')
    .requiredOption('--profile <bank.json>', 'the bank profile')
    .option('--batch <id>', 'batch id; default <file stem>-<12 hex of its sha256>, so the same file resumes its batch')
    .option('--dry-run', 'validate and write the rejects file; enqueue nothing')
    .option('--json', 'print the summary as one JSON object')
    .option('--lang <ru|en>', LANG_HELP, langFlag);
  return addInputOptions(command).action(async (file: string, _flags: unknown, cmd: Command) => {
    const opts = cmd.opts<LoadFlags>();
    checkBatch(opts.batch);
    // Loaded when run, as every command's own heavy parts (program.ts).
    const [{ loadBatch }, { inputFingerprint }] = await Promise.all([
      import('../../batch/load-batch.js'),
      import('../../input/reading-options.js'),
    ]);
    const env = context.environment();
    const reading = await readingOptions(opts);
    const profile = await loadProfile(opts.profile);
    const fingerprint = await inputFingerprint(file, reading);
    const batch = opts.batch ?? defaultBatchId(file, fingerprint);
    const summary = await withDatabase(env, (db) =>
      withRedis(env, async (redis) => {
        await refuseOtherGateway(db, env);
        const progress = createProgress('load', { unit: 'bytes', logger: env.logger });
        try {
          if (!opts.dryRun) await requireNoEviction(redis, env.config.redis);
          return await withBoundedHeap(() =>
            loadBatch({
              file,
              fingerprint,
              batch,
              profile,
              profileFile: resolve(opts.profile),
              redis,
              keys: env.keys,
              db,
              logger: env.logger,
              ...reading,
              resubmit: opts.resubmit,
              dryRun: opts.dryRun,
              lang: opts.lang ?? env.config.lang,
              retentionMs: env.config.retentionMs,
              onProgress: ({ rows, bytes, size }) => progress.update({ value: bytes, total: size, rows }),
            }),
          );
        } finally {
          progress.stop();
        }
      }),
    );
    if (opts.json) console.log(JSON.stringify(summary));
    else printLoad(summary);
    context.setExitCode(summary.invalid > 0 ? 3 : 0);
  });
}
