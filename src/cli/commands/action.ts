/**
 * `realty-batch cancel|suspend|resume <batch> (--rows 3,7 | --deals <file> | --duplicates)
 * --cause <text> [--input <file>] [--document <file.pdf>]`: an action_request for each chosen
 * docflow of the batch, at most once per docflow and action (src/followups/actions.ts).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { ActionLine, ActionSelection } from '../../followups/actions.js';
import type { ActionType } from '../../followups/followup-ledger.js';
import type { CliContext } from '../environment.js';
import { followUpOptions, type FollowUpFlags } from '../follow-up-options.js';

/** `--rows 3,7,12`. */
function rowList(value: string): number[] {
  const rows = value.split(',').map((v) => v.trim());
  if (rows.some((r) => !/^[1-9]\d*$/.test(r)))
    throw new InvalidArgumentError('--rows takes row numbers, 1 and up, separated by commas (3,7,12).');
  return rows.map(Number);
}

interface ActionFlags extends FollowUpFlags {
  rows?: number[];
  deals?: string;
  duplicates?: boolean;
  cause: string;
  input?: string;
  document?: string;
}

const SAID: Record<ActionLine['result'], string> = {
  sent: 'sent',
  sent_before: 'sent before',
  skipped: 'not sent',
  refused: 'not sent',
  lost: 'answer lost',
  waiting: 'not sent',
  needs_lift: 'needs a lift',
};

const DOES: Record<ActionType, string> = {
  cancel: 'cancel the chosen docflows of a batch at the registry (action_request cancel); a cancelled docflow ends in error',
  suspend: 'suspend the processing of the chosen docflows of a batch at the registry (action_request suspend), until resumed',
  resume: 'resume the processing of the chosen docflows of a batch that were suspended (action_request resume)',
};

export function registerActionCommand(program: Command, context: CliContext, action: ActionType): Command {
  const command = program
    .command(action)
    .description(`${DOES[action]}; once per docflow and action, only while it is in processing (sent)`)
    .argument('<batch>', 'batch id')
    .option('--rows <list>', 'the rows whose docflows are acted on: 3,7,12', rowList)
    .option('--deals <file>', 'a file of dealIds, one a line: their docflows are acted on')
    .option(
      '--duplicates',
      action === 'cancel'
        ? "the second docflows the news feed found for the batch's deals: one in processing is cancelled, one waiting for signatures is left unsigned, one registered needs a lift"
        : 'only with cancel',
    )
    .requiredOption('--cause <text>', 'why, in a few words the registry reads')
    .option('--input <file>', "the batch's input, when it is no longer where it was loaded from: the owners who ask are read from it")
    .option(
      '--document <file>',
      'a document the action needs (a PDF or XML; a <file>.sig beside it is its signature), sent with each action',
    );
  return followUpOptions(command).action(async (batch: string, _flags: unknown, cmd: Command) => {
    const opts = cmd.opts<ActionFlags>();
    const chosen = [opts.rows, opts.deals, opts.duplicates].filter((x) => x !== undefined).length;
    if (chosen !== 1) throw new UsageError(`${action} takes one of --rows, --deals and --duplicates.`);
    if (opts.duplicates && action !== 'cancel')
      throw new UsageError('--duplicates goes with cancel: a second docflow of a deal is cancelled, never suspended or resumed.');
    if (opts.cause.trim() === '') throw new UsageError('--cause must say why.');
    // Loaded when run, as every command's own heavy parts (program.ts).
    const [{ withFollowUp }, { actOnBatch, readDealIds }] = await Promise.all([
      import('../follow-up.js'),
      import('../../followups/actions.js'),
    ]);
    const selection: ActionSelection = opts.rows
      ? { rows: opts.rows }
      : opts.deals
        ? { deals: await readDealIds(opts.deals) }
        : { duplicates: true };
    await withFollowUp(context, batch, opts, async (run) => {
      const lines = await actOnBatch({
        ...run.send,
        action,
        cause: opts.cause.trim(),
        meta: run.meta,
        bank: run.bank,
        profile: run.profile,
        parents: run.parents,
        selection,
        ...(opts.input !== undefined && { input: opts.input }),
        ...(opts.document !== undefined && { document: opts.document }),
        baseUrl: run.gateway.apiUrl,
        operator: run.operator,
        concurrency: opts.concurrency,
        retry: { signal: run.signal },
        logger: run.env.logger,
      });
      const sent = lines.filter((l) => l.result === 'sent').length;
      // The registry acted at once: the feed's follower stores the docflows' new states, which `results` writes.
      const fresh = sent === 0 || (await run.feedPastNow());
      if (opts.json) console.log(JSON.stringify({ batch, action, lines, statesFromFeed: fresh }, null, 2));
      else {
        console.log(
          `${action}: ${lines.length} docflows; ${sent} ${action} sent, ${lines.filter((l) => l.result === 'sent_before').length} sent before`,
        );
        for (const l of lines)
          console.log(
            `  row ${l.row} ${l.dealId} (docflow ${l.docflowId || '-'}${l.state ? `, ${l.state}` : ''}): ${SAID[l.result]}${l.actionDocflowId ? ` (action ${l.actionDocflowId})` : ''}: ${l.reason}`,
          );
      }
      if (!fresh)
        console.error(
          `${action}: the news feed was not read past the actions within --feed-wait-ms: results shows the new states once a follower reads them (realty-batch track)`,
        );
      if (lines.some((l) => l.result !== 'sent' && l.result !== 'sent_before')) context.setExitCode(3);
    });
  });
}
