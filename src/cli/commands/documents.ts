/** `realty-batch documents <batch> --dir <d>`: the registry's result files of every completed docflow of a batch. */
import type { Command } from 'commander';
import { createBatchStore, noSuchBatch } from '../../batch/batch-store.js';
import { requireGateway } from '../../config.js';
import { UsageError } from '../../errors.js';
import { createRealtyClient } from '../../realty/client.js';
import { downloadDocuments } from '../../results/documents.js';
import { onShutdownSignals, positiveInt, type CliContext } from '../common.js';
import { checkBatch } from '../input-options.js';
import { createProgress } from '../progress.js';
import { openGatewaySession } from '../gateway-session.js';
import { withRedis } from '../with-redis.js';

interface DocumentsFlags {
  dir: string;
  concurrency: number;
  timeoutMs: number;
}

export function registerDocumentsCommand(program: Command, context: CliContext): Command {
  return program
    .command('documents')
    .description(
      'download the result files (the extract and its signatures) of every completed docflow of a batch to <dir>/<dealId>/, with manifest.csv; run again, it downloads only what is missing',
    )
    .argument('<batch>', 'batch id')
    .requiredOption('--dir <dir>', 'where the files go: <dir>/<dealId>/<fileId>.<ext> and <dir>/manifest.csv')
    .option('--concurrency <n>', 'docflows downloaded at once', positiveInt('--concurrency'), 4)
    .option('--timeout-ms <ms>', 'per gateway request (a download: between two chunks)', positiveInt('--timeout-ms'), 30_000)
    .action(async (batch: string, _flags: unknown, cmd: Command) => {
      const opts = cmd.opts<DocumentsFlags>();
      checkBatch(batch);
      const env = context.environment();
      const gateway = requireGateway(env.config);
      const shutdown = onShutdownSignals('stopping after the files being downloaded');
      await withRedis(env, async (redis) => {
        const meta = await createBatchStore(redis, env.keys).get(batch);
        if (!meta) throw noSuchBatch(redis, env.keys, batch);
        if (meta.total === undefined) throw new UsageError(`Batch ${batch} is still loading: its total is not known yet.`);
        const client = createRealtyClient({
          baseUrl: gateway.apiUrl,
          session: await openGatewaySession(gateway, { redis, keys: env.keys, timeoutMs: opts.timeoutMs, logger: env.logger }),
          timeoutMs: opts.timeoutMs,
          connections: opts.concurrency,
        });
        const progress = createProgress('documents', { unit: 'rows', logger: env.logger });
        try {
          const summary = await downloadDocuments({
            redis,
            keys: env.keys,
            client,
            batch,
            total: meta.total,
            dir: opts.dir,
            concurrency: opts.concurrency,
            logger: env.logger,
            retry: { signal: shutdown.signal },
            onProgress: ({ done, docflows, downloaded }) => progress.update({ value: done, total: docflows, rows: downloaded }),
          });
          progress.stop();
          const mb = (summary.bytes / 1024 / 1024).toFixed(1);
          console.log(
            `documents: ${summary.docflows} completed docflows; ${summary.downloaded} files downloaded (${mb} MB), ${summary.skipped} already there; manifest ${summary.manifest}`,
          );
          for (const f of summary.failed) console.log(`  ${f.dealId} (docflow ${f.docflowId}): not downloaded: ${f.reason}`);
          if (summary.failed.length > 0) {
            console.log(`  run realty-batch documents ${batch} --dir ${opts.dir} again to try them again`);
            context.setExitCode(3);
          }
        } finally {
          progress.stop();
          await client.close();
        }
      });
    });
}
