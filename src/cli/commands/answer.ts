/**
 * `realty-batch answer <batch> --dir <d>`: each `<d>/<dealId>/` folder's files as one additional
 * packet to its deal's docflow in processing (src/followups/answer.ts); a line for every deal
 * of the batch, on stdout and in a CSV (`--out`, default `<input stem>.answers.csv` beside the
 * batch's input, as the results file).
 */
import type { Command } from 'commander';
import { writeFileAtomically } from '../../files/atomic-file.js';
import type { AnswerLine } from '../../followups/answer.js';
import type { CliContext } from '../environment.js';
import { followUpOptions, type FollowUpFlags } from '../follow-up-options.js';
import { defaultResultsPath } from '../input-options.js';

interface AnswerFlags extends FollowUpFlags {
  dir: string;
  out?: string;
}

const SAID: Record<AnswerLine['result'], string> = {
  sent: 'packet sent',
  sent_before: 'sent before',
  skipped: 'not sent',
  refused: 'not sent',
  lost: 'answer lost',
  waiting: 'not sent',
};

/** Lines for deals without a folder shown one by one up to this many, then counted (the CSV has them all). */
const NO_FOLDER_SHOWN = 20;

export function registerAnswerCommand(program: Command, context: CliContext): Command {
  const command = program
    .command('answer')
    .description(
      "send each <dir>/<dealId>/ folder's files (PDF or XML, each with an optional <file>.sig) as one additional packet to its deal's docflow in processing (sent), on behalf of the bank; once per docflow and files",
    )
    .argument('<batch>', 'batch id')
    .requiredOption('--dir <dir>', 'a folder per deal: <dir>/<dealId>/<files>')
    .option('--out <file>', "the lines as CSV; default <input stem>.answers.csv beside the batch's input");
  return followUpOptions(command).action(async (batch: string, _flags: unknown, cmd: Command) => {
    const opts = cmd.opts<AnswerFlags>();
    // Loaded when run, as every command's own heavy parts (program.ts).
    const [{ withFollowUp }, { ANSWER_COLUMNS, answerBatch, withFeedStates }, { csvText }] = await Promise.all([
      import('../follow-up.js'),
      import('../../followups/answer.js'),
      import('../../results/docflow-files.js'),
    ]);
    await withFollowUp(context, batch, opts, async (run) => {
      let lines = await answerBatch({
        ...run.send,
        batch,
        bank: run.bank,
        profile: run.profile,
        parents: run.parents,
        dir: opts.dir,
        baseUrl: run.gateway.apiUrl,
        operator: run.operator,
        concurrency: opts.concurrency,
        retry: { signal: run.signal },
        logger: run.env.logger,
      });
      const sent = lines.filter((l) => l.result === 'sent').length;
      const fresh = sent === 0 || (await run.feedPastNow());
      lines = withFeedStates(lines, await run.states(lines.map((l) => l.packetDocflowId).filter(Boolean)));
      const out = opts.out ?? defaultResultsPath(run.meta.file, 'answers');
      await writeFileAtomically(
        out,
        csvText(
          lines.map((l) => ({ ...l, row: l.row === 0 ? '' : String(l.row) })),
          ANSWER_COLUMNS,
        ),
      );
      if (opts.json) {
        console.log(JSON.stringify({ batch, file: out, lines, statesFromFeed: fresh }, null, 2));
      } else {
        const noFolder = lines.filter((l) => l.reason === 'no folder of more documents');
        console.log(
          `answer: ${sent} ${sent === 1 ? 'packet' : 'packets'} sent, ${lines.filter((l) => l.result === 'sent_before').length} sent before, ${noFolder.length} deals without a folder; lines: ${out}`,
        );
        let shown = 0;
        for (const l of lines) {
          if (noFolder.includes(l) && shown++ >= NO_FOLDER_SHOWN) continue;
          const packet = l.packetDocflowId ? ` (packet ${l.packetDocflowId}${l.packetState ? `, ${l.packetState}` : ''})` : '';
          console.log(
            `  ${l.row ? `row ${l.row} ` : ''}${l.dealId}${l.docflowId ? ` (docflow ${l.docflowId})` : ''}: ${SAID[l.result]}${packet}: ${l.reason}`,
          );
        }
        if (noFolder.length > NO_FOLDER_SHOWN)
          console.log(`  and ${noFolder.length - NO_FOLDER_SHOWN} more deals without a folder (all in ${out})`);
      }
      if (lines.some((l) => l.result === 'refused' || l.result === 'lost' || l.result === 'waiting')) context.setExitCode(3);
    });
  });
}
