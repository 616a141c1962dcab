/**
 * `realty-batch ledger import`: the ledger rebuilt from results files, the last resort when the
 * database is lost and no backup is left. Each row that names a docflow (queued, suspended,
 * already_submitted) becomes its deal's entry, submitted with that docflow and the try its
 * requestId names; an entry that names another docflow is never overwritten but reported as a
 * conflict. The entries have no row of their own (batch '', row 0): the first row that asks for
 * the deal again takes the docflow as its own, as with a docflow the news feed found.
 */
import { basename } from 'node:path';
import type { Database, Trx } from '../db/database.js';
import type { LedgerRow } from '../db/schema.js';
import { UsageError } from '../errors.js';
import { DOCFLOW_TYPE_CODES, parseRequestId, type DocflowType } from '../ledger/entry.js';
import { compareKeys, insertRow, lockRow, NO_TRY, submitRow, type LedgerKey, type PrevDocflow } from '../ledger/rows.js';
import { SUBMITTED_OUTCOMES, type Outcome } from '../domain/outcome.js';
import { readResultsFile, type ResultsLine } from './read-results.js';

export interface LedgerImportOptions {
  /** The bank's INN (`--profile`): what a file without requestIds is imported under, and what every requestId must name. */
  bank?: string;
  /** `--type`: the type of a file without requestIds. */
  type?: DocflowType;
  /** Rows per transaction (default 500): a long import never holds the database for long. */
  chunk?: number;
}

/** A deal whose entry names another docflow than the file's row: left as it was. */
export interface ImportConflict {
  file: string;
  line: number;
  dealId: string;
  /** The docflow the ledger keeps, and the one the file names. */
  ledgerDocflowId: string;
  fileDocflowId: string;
}

export interface LedgerImportSummary {
  /** Entries made (or a claim without a docflow given the file's). */
  imported: number;
  /** Rows whose deal's entry already names their docflow. */
  known: number;
  conflicts: ImportConflict[];
  /** Rows that name no docflow (refused, failed, pending): nothing to import. */
  skipped: number;
  /** Rows that name a docflow but could not be imported, one sentence each. */
  problems: string[];
}

/** A row ready to be written: its deal's key, its try, its docflow. */
interface Entry {
  file: string;
  line: number;
  key: LedgerKey;
  n: number;
  docflowId: string;
  outcome: 'queued' | 'suspended';
  at: string;
  cn: string | null;
}

/** `--type` as a code (`reg`, `lift`, ...) or a type's name (`encumbrance_request`, ...). */
export function docflowTypeOf(value: string): DocflowType | undefined {
  const v = value.trim();
  if (Object.hasOwn(DOCFLOW_TYPE_CODES, v)) return v as DocflowType;
  return (Object.keys(DOCFLOW_TYPE_CODES) as DocflowType[]).find((t) => DOCFLOW_TYPE_CODES[t] === v);
}

export const TYPE_NAMES = Object.entries(DOCFLOW_TYPE_CODES)
  .map(([type, code]) => `${code} (${type})`)
  .join(', ');

/** The `submitted before (batch …, row …, suspended, …)` of an already_submitted row: how its docflow was answered. */
const BEFORE = /submitted before \(batch .*, row \d+, (queued|suspended), /;

export async function importLedger(
  db: Database,
  files: readonly string[],
  options: LedgerImportOptions = {},
): Promise<LedgerImportSummary> {
  const summary: LedgerImportSummary = { imported: 0, known: 0, conflicts: [], skipped: 0, problems: [] };
  const chunk = options.chunk ?? 500;
  for (const file of files) {
    const reader = readResultsFile(file);
    const columns = new Set(await reader.columns());
    const name = basename(file);
    if (!columns.has('dealId') || !columns.has('docflowId'))
      throw new UsageError(`${file} is not a results file of realty-batch: it has no dealId and docflowId columns.`);
    const older = !columns.has('requestId');
    if (older && (!options.bank || !options.type))
      throw new UsageError(
        `${file} has no requestId and type columns (a results file of an earlier version): give --profile <bank.json> and --type <${Object.values(DOCFLOW_TYPE_CODES).join('|')}>, and its docflows are imported as try 0.`,
      );
    let pending: Entry[] = [];
    for await (const line of reader.lines()) {
      const entry = entryOf(name, line, options, summary);
      if (!entry) continue;
      pending.push(entry);
      if (pending.length >= chunk) {
        await write(db, pending, summary);
        pending = [];
        // Between two transactions: other writers (a worker, the feed) get the database.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    if (pending.length > 0) await write(db, pending, summary);
  }
  return summary;
}

/** The entry a row asks for; undefined (and counted) when it names no docflow or cannot be imported. */
function entryOf(
  file: string,
  { line, cells }: ResultsLine,
  options: LedgerImportOptions,
  summary: LedgerImportSummary,
): Entry | undefined {
  const dealId = cells.dealId ?? '';
  const docflowId = (cells.docflowId ?? '').trim();
  const outcome = cells.outcome as Outcome;
  if (!docflowId || !SUBMITTED_OUTCOMES.has(outcome)) {
    summary.skipped++;
    return undefined;
  }
  const problem = (why: string): undefined => {
    summary.problems.push(`${file}, line ${line} (deal ${dealId}): ${why}; not imported.`);
    return undefined;
  };
  if (dealId === '') return problem('the row has a docflowId but no dealId');
  const origin = originOf(dealId, cells, options);
  if (typeof origin === 'string') return problem(origin);
  const { key, n } = origin;
  const answered = outcome === 'already_submitted' ? BEFORE.exec(cells.errorMessage ?? '')?.[1] : outcome;
  return {
    file,
    line,
    key,
    n,
    docflowId,
    outcome: answered === 'suspended' ? 'suspended' : 'queued',
    at: cells.finishedAt || new Date().toISOString(),
    cn: cells.cadastralNumber?.trim() || null,
  };
}

/** The deal's key and try a row names (its requestId, else the profile's bank and --type, try 0), or why it names none. */
function originOf(dealId: string, cells: ResultsLine['cells'], options: LedgerImportOptions): { key: LedgerKey; n: number } | string {
  const requestId = (cells.requestId ?? '').trim();
  const type = cells.type?.trim() ?? '';
  if (!requestId) {
    // An older file, or a row whose outcome did not keep its requestId.
    const given = (type && docflowTypeOf(type)) || options.type;
    if (!options.bank || !given) return 'it has no requestId: give --profile and --type to import it as try 0';
    return { key: { bank: options.bank, type: given, dealId }, n: 0 };
  }
  const parsed = parseRequestId(requestId);
  if (!parsed) return `its requestId ${requestId} is not one of realty-batch's (<INN>:<type code>:<try>:<dealId>)`;
  if (parsed.dealId !== dealId) return `its requestId ${requestId} names deal ${parsed.dealId}`;
  if (options.bank && parsed.bank !== options.bank) return `its requestId names the bank ${parsed.bank}, not the profile's ${options.bank}`;
  if (type && type !== parsed.type) return `its type ${type} is not the one its requestId names (${parsed.type})`;
  return { key: { bank: parsed.bank, type: parsed.type, dealId }, n: parsed.n };
}

/** One transaction for a chunk of rows, each decided on its deal's row as it stands (locked on PostgreSQL). */
async function write(db: Database, entries: readonly Entry[], summary: LedgerImportSummary): Promise<void> {
  // Counted once the transaction committed: a transaction retried whole counts once.
  const counted = await db.transaction(async (trx) => {
    const now = await db.now(trx);
    const tally = { imported: 0, known: 0, conflicts: [] as ImportConflict[] };
    // Key order: two writers lock the same rows in the same order (no deadlock on PostgreSQL).
    const sorted = [...entries].sort((a, b) => compareKeys(a.key, b.key));
    for (const e of sorted) {
      const verdict = await writeEntry(trx, db, now, e);
      if (verdict.kind === 'imported') tally.imported++;
      else if (verdict.kind === 'known') tally.known++;
      else
        tally.conflicts.push({
          file: e.file,
          line: e.line,
          dealId: e.key.dealId,
          ledgerDocflowId: verdict.docflowId,
          fileDocflowId: e.docflowId,
        });
    }
    return tally;
  });
  summary.imported += counted.imported;
  summary.known += counted.known;
  summary.conflicts.push(...counted.conflicts.sort((a, b) => a.line - b.line));
}

type Written = { kind: 'imported' } | { kind: 'known' } | { kind: 'conflict'; docflowId: string };

/** Imported, known, or a conflict with the other docflow the deal's entry names. */
async function writeEntry(trx: Trx, db: Database, now: number, e: Entry): Promise<Written> {
  const row = await lockRow(trx, db.engine, e.key);
  const docflow = { docflowId: e.docflowId, outcome: e.outcome, at: e.at, via: 'answer' as const };
  if (!row) {
    await insertRow(trx, {
      bank: e.key.bank,
      type: e.key.type,
      deal_id: e.key.dealId,
      n: e.n,
      state: 'submitted',
      batch: '',
      row: 0,
      job: null,
      ...NO_TRY,
      docflow_id: e.docflowId,
      outcome: e.outcome,
      at: e.at,
      via: 'answer',
      cn: e.cn,
      addr: null,
      pf: null,
      prev: null,
      updated_at: now,
    });
    return { kind: 'imported' };
  }
  const named = namedDocflow(row);
  if (named === e.docflowId) return { kind: 'known' };
  if (named) return { kind: 'conflict', docflowId: named };
  // A claim with no docflow (a try waiting for its answer, or between tries): the file is the
  // answer the feed would have given. It keeps its row, which takes the docflow as its own.
  await submitRow(trx, e.key, docflow, now, { n: e.n, ...(row.cn === null && e.cn && { cn: e.cn }) });
  return { kind: 'imported' };
}

/** The docflow an entry names: its own, or, while a resubmission has made none yet, the one it would replace. */
function namedDocflow(row: LedgerRow): string | undefined {
  if (row.state === 'submitted' && row.docflow_id) return row.docflow_id;
  if (row.prev) return (JSON.parse(row.prev) as PrevDocflow).docflowId || undefined;
  return undefined;
}

/** What the audit keeps of an import: the files' names and the counts. */
export function importDetail(files: readonly string[], s: LedgerImportSummary): string {
  return `from ${files.map((f) => basename(f)).join(', ')}: ${s.imported} imported, ${s.known} already known, ${s.conflicts.length} conflicts, ${s.problems.length} not importable, ${s.skipped} rows without a docflow`;
}
