/** `realty-batch payments <batch> --out <file>`: the deals whose docflow waits for the state duty. */
import type { Command } from 'commander';
import { createBatchStore, noSuchBatch } from '../../batch/batch-store.js';
import { UsageError } from '../../errors.js';
import { describeStatesAge, writePayments } from '../../results/payments.js';
import { readStatesAge } from '../../feed/states-age.js';
import type { Lang } from '../../config.js';
import { type CliContext } from '../environment.js';
import { LANG_HELP, langFlag } from '../flags.js';
import { checkBatch, defaultResultsPath } from '../input-options.js';
import { withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';

interface PaymentsFlags {
  out?: string;
  excel?: boolean;
  json?: boolean;
  lang?: Lang;
}

export function registerPaymentsCommand(program: Command, context: CliContext): Command {
  return program
    .command('payments')
    .description('list the deals whose docflow waits for the state duty (dealId, docflowId, uin, amount, payer, since)')
    .argument('<batch>', 'batch id')
    .option('--out <file>', "the payments file (.csv, or .jsonl); default <input stem>.payments.csv beside the batch's input")
    .option('--excel', 'write for Russian Excel (BOM, ";", CRLF)')
    .option('--json', 'print the summary as one JSON object: file, rows, amount, statesAsOf, statesAgeMs, statesStale')
    .option('--lang <ru|en>', LANG_HELP, langFlag)
    .action(async (batch: string, _flags: unknown, cmd: Command) => {
      const opts = cmd.opts<PaymentsFlags>();
      checkBatch(batch);
      const env = context.environment();
      await withDatabase(env, (db) =>
        withRedis(env, async (redis) => {
          const meta = await createBatchStore(redis, env.keys, db).get(batch);
          if (!meta) throw noSuchBatch(redis, env.keys, batch);
          if (meta.total === undefined) throw new UsageError(`Batch ${batch} is still loading: its total is not known yet.`);
          const out = opts.out ?? defaultResultsPath(meta.file, 'payments');
          const summary = await writePayments({
            redis,
            keys: env.keys,
            db,
            batch,
            total: meta.total,
            out,
            excel: opts.excel,
            lang: opts.lang ?? env.config.lang,
          });
          // The file is as new as the feed's last complete read: a deal paid since is still in it.
          const age = await readStatesAge(db);
          console.error(`payments: ${describeStatesAge(age)}`);
          if (opts.json) {
            const { file, rows, amount } = summary;
            const states = { statesAsOf: age.asOf ?? null, statesAgeMs: age.ageMs ?? null, statesStale: age.stale };
            console.log(JSON.stringify({ batch, file, rows, amount, ...states }));
            return;
          }
          const total = summary.amount.toLocaleString('en-US', { maximumFractionDigits: 2 }).replace(/,/g, ' ');
          console.log(
            summary.rows === 0
              ? `payments: ${summary.file} (no deal of batch ${batch} waits for a payment)`
              : `payments: ${summary.file} (${summary.rows} ${summary.rows === 1 ? 'deal waits' : 'deals wait'} for the state duty, ${total} ₽ in all)`,
          );
        }),
      );
    });
}
