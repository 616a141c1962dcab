/**
 * `realty-batch ledger import <results files...> [--profile <bank.json>] [--type reg|lift|...]`:
 * the ledger rebuilt from results files when the database is lost (src/results/ledger-import.ts).
 * Exit 3 when a row could not be imported or its deal's entry names another docflow.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { commandOperator, recordAction } from '../../db/operator-actions.js';
import type { DocflowType } from '../../ledger/entry.js';
import { loadProfile } from '../../input/profile.js';
import { docflowTypeOf, importDetail, importLedger, TYPE_NAMES, type LedgerImportSummary } from '../../results/ledger-import.js';
import type { CliContext } from '../environment.js';
import { withDatabase } from '../with-database.js';

export interface LedgerImportFlags {
  profile?: string;
  type?: DocflowType;
  operator?: string;
  json?: boolean;
}

function typeFlag(value: string): DocflowType {
  const type = docflowTypeOf(value);
  if (!type) throw new InvalidArgumentError(`--type must be one of ${TYPE_NAMES}.`);
  return type;
}

export function registerLedgerImportCommand(ledger: Command, context: CliContext): Command {
  return ledger
    .command('import')
    .description(
      "rebuild the ledger from results files (the last resort when the database is lost): each row with a docflowId becomes its deal's entry",
    )
    .argument('<files...>', 'results files (CSV, the --excel CSV, or JSONL) written by realty-batch')
    .option('--profile <bank.json>', 'the bank profile: its INN for files without a requestId column, and checked against every requestId')
    .option('--type <code>', `the docflow type of files without a type column: ${TYPE_NAMES}`, typeFlag)
    .option('--operator <name>', 'who imports, for the audit of operator actions (default: the OS user)')
    .option('--json', 'print the summary as one JSON object')
    .action(async (files: string[], _flags: unknown, cmd: Command) => {
      const opts = cmd.opts<LedgerImportFlags>();
      const env = context.environment();
      const bank = opts.profile ? (await loadProfile(opts.profile)).organization.inn : undefined;
      const summary = await withDatabase(env, async (db) => {
        const done = await importLedger(db, files, { ...(bank && { bank }), ...(opts.type && { type: opts.type }) });
        await recordAction(db, { who: commandOperator(opts.operator), action: 'ledger import', detail: importDetail(files, done) });
        return done;
      });
      print(summary, opts.json === true);
      if (summary.conflicts.length > 0 || summary.problems.length > 0) context.setExitCode(3);
    });
}

function print(s: LedgerImportSummary, json: boolean): void {
  if (json) {
    console.log(
      JSON.stringify({
        imported: s.imported,
        known: s.known,
        conflicts: s.conflicts,
        problems: s.problems,
        skipped: s.skipped,
      }),
    );
    return;
  }
  for (const c of s.conflicts)
    console.log(
      `conflict: ${c.file}, line ${c.line}: deal ${c.dealId} has docflow ${c.ledgerDocflowId} in the ledger, the file names ${c.fileDocflowId}; the ledger's is kept`,
    );
  for (const p of s.problems) console.log(`not imported: ${p}`);
  console.log(
    `ledger import: ${s.imported} imported, ${s.known} already known, ${s.conflicts.length} conflicts, ${s.problems.length} not importable, ${s.skipped} rows without a docflow skipped`,
  );
}
