/** `realty-batch results <batch> --out <file>`: (re)write a batch's results file from its stored outcomes. */
import { describeStatesAge, readStatesAge } from '../../feed/states-age.js';
import type { Command } from 'commander';
import { createBatchStore, noSuchBatch } from '../../batch/batch-store.js';
import { exitCodeFor } from '../../batch/exit-code.js';
import type { Lang } from '../../config.js';
import { InputError, UsageError } from '../../errors.js';
import { writeAttention } from '../../results/attention.js';
import { writeResults } from '../../results/write-results.js';
import { type CliContext } from '../environment.js';
import { LANG_HELP, langFlag } from '../flags.js';
import { checkBatch, defaultResultsPath } from '../input-options.js';
import { printCounts, rows } from '../print.js';
import { withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';

export interface ResultsFlags {
  out?: string;
  excel?: boolean;
  attention?: string;
  attentionAsInput?: boolean;
  input?: string;
  lang?: Lang;
}

export function registerResultsCommand(program: Command, context: CliContext): Command {
  return program
    .command('results')
    .description("(re)write a batch's results file from the stored outcomes, at any time")
    .argument('<batch>', 'batch id')
    .option(
      '--out <file>',
      "the results file (.csv, .xlsx or .jsonl); default <input stem>.results.csv beside the batch's input, as run writes it; a plain .csv or .jsonl keeps English codes whatever --lang says",
    )
    .option('--excel', 'write for Russian Excel (BOM, ";", CRLF); the default when the batch\'s profile says "excel": true')
    .option('--no-excel', 'write UTF-8 with "," even when the profile says "excel": true')
    .option('--attention <file>', "rows that need a person: row, outcome, hint and errors, then the input's own columns")
    .option('--attention-as-input', "write the attention file in the input's own delimiter, encoding and line ending, not Russian Excel's")
    .option('--input <file>', 'the batch input, when it is no longer where it was loaded from (for --attention)')
    .option('--lang <ru|en>', LANG_HELP, langFlag)
    .action(async (batch: string, _flags: unknown, cmd: Command) => {
      const opts = cmd.opts<ResultsFlags>();
      checkBatch(batch);
      const env = context.environment();
      await withDatabase(env, (db) =>
        withRedis(env, async (redis) => {
          const store = createBatchStore(redis, env.keys, db);
          const meta = await store.get(batch);
          if (!meta) throw noSuchBatch(redis, env.keys, batch);
          if (meta.state === 'failed')
            throw new InputError(`Batch ${batch} did not load completely (${meta.error ?? 'unknown error'}); nothing of it was sent.`);
          if (meta.total === undefined) throw new UsageError(`Batch ${batch} is still loading: its total is not known yet.`);
          const out = opts.out ?? defaultResultsPath(meta.file);
          // The bank's profile may ask for Excel's form; a flag wins.
          const excel = opts.excel ?? (await store.profile(batch))?.excel;
          const lang = opts.lang ?? env.config.lang;
          const summary = await writeResults({ redis, keys: env.keys, db, batch, total: meta.total, out, excel, lang });
          printCounts(batch, summary.counts);
          console.log(`results: ${summary.file} (${rows(summary.rows)})`);
          // The state columns are as fresh as the feed's last complete read: said on stderr when they are old.
          const age = await readStatesAge(db, redis, env.keys);
          if (age.stale) console.error(`results: ${describeStatesAge(age)}`);
          if (summary.duplicates > 0)
            console.error(
              `realty-batch: ${rows(summary.duplicates)} ${summary.duplicates === 1 ? 'has' : 'have'} a deal with two docflows at the gateway (DUPLICATE_DOCFLOW, otherDocflowId in the results file): cancel one of each pair at the gateway`,
            );
          if (opts.attention) {
            const attention = await writeAttention({
              redis,
              keys: env.keys,
              db,
              batch,
              out: opts.attention,
              input: opts.input,
              lang,
              asInput: opts.attentionAsInput,
            });
            console.log(`attention: ${attention.file} (${rows(attention.rows)} ${attention.rows === 1 ? 'needs' : 'need'} a person)`);
          }
          context.setExitCode(exitCodeFor(summary.counts, summary.duplicates));
        }),
      );
    });
}
