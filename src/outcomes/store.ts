/**
 * Outcomes, one per row per batch, in the database (the table `outcomes`): whatever becomes of
 * Redis, a row keeps the outcome it was given. The outcome and what it means for its deal's
 * ledger entry are one decision in one transaction (many rows' of one event-loop turn share
 * it: src/db/group-commit.ts); then, in Redis, the row's checkpoint and row-index entry go and
 * its job loses its deal. A crash between the two leaves a job that still holds its deal: it
 * runs again, finds its outcome and only strips the deal (src/outcomes/record-outcome.ts).
 */
import type { Database, Trx } from '../db/database.js';
import { recordDuplicate } from '../db/duplicates.js';
import { commitAlone, type Committer } from '../db/group-commit.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { createScriptBatcher, luaFile, type ScriptRunner } from '../redis/lua.js';
import { propertyArgs } from '../ledger/claim.js';
import { parseRequestId, REGISTRATION, type DocflowType, type PropertyKey, type SubmittedDeal, type Via } from '../ledger/entry.js';
import {
  dealOf,
  insertRow,
  keyString,
  lockRow,
  NO_TRY,
  releaseRow,
  sameProperty,
  submitRow,
  submitRowUnlessOther,
  type LedgerKey,
} from '../ledger/rows.js';
import type { LedgerRow } from '../db/schema.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import { countOutcomes, readOutcome, readOutcomeRange, writeOutcome } from '../ledger/outcome-rows.js';

export interface RecordOptions {
  /**
   * The job to strip of its personal data in the same script: its Redis key and its
   * data without the deal. Written only while the job exists, as BullMQ's own
   * updateData does (commands/updateData-1.lua).
   */
  job?: { key: string; data: string } | undefined;
  /**
   * The row's deal in the ledger. A docflow (queued, suspended) becomes the deal's;
   * any other outcome ends the row's claim (the deal goes back to its earlier docflow,
   * or to none), unless the try may still have made one (`keepClaim`: ERR_UNCERTAIN).
   */
  ledger?:
    | {
        bank: string;
        /** The docflow type (default: a registration). */
        type?: DocflowType;
        /** The deal's key in the ledger when it is not the row's dealId (an extract's: src/docflows/extract/). */
        dealId?: string;
        requestId?: string;
        resubmit: boolean;
        via?: Via;
        keepClaim?: boolean;
        /** The property the row is for: another property's docflow is never this row's instead (src/ledger/claim.ts). */
        property?: PropertyKey;
      }
    | undefined;
  /** Write only when the row has no outcome yet (the net under jobs BullMQ fails by itself). */
  ifAbsent?: boolean;
}

export type RecordResult =
  | { kind: 'written' }
  /** `ifAbsent`, and the row had an outcome: nothing written. */
  | { kind: 'exists' }
  /**
   * Not written: the ledger says the deal has a docflow (the feed found a lost answer,
   * or another row made it). The row records that instead: its own docflow, or
   * already_submitted.
   */
  | { kind: 'submitted'; own: boolean; deal: SubmittedDeal; via: Via }
  /** Written, but the deal already had another docflow: the gateway now holds two. */
  | { kind: 'conflict'; deal: Pick<SubmittedDeal, 'docflowId' | 'batch' | 'row'> };

export interface OutcomeStore {
  record(batch: string, record: OutcomeRecord, options?: RecordOptions): Promise<RecordResult>;
  /** Rows `from`..`to` (inclusive), `undefined` where a row has no outcome yet. */
  range(batch: string, from: number, to: number): Promise<Array<OutcomeRecord | undefined>>;
  count(batch: string): Promise<number>;
}

/** After the outcome's commit, the row's work in Redis: src/redis/lua/outcome-after-write.lua. */
const AFTER_WRITE = luaFile('outcome-after-write');

const SUBMITTED_OUTCOMES = new Set(['queued', 'suspended']);

export interface OutcomeStoreOptions {
  /** Send the scripts of one turn of the event loop together (a worker with many jobs at once). */
  batched?: boolean;
  /** Runs the scripts (wins over `batched`): a worker's one batcher, shared with its ledger. */
  run?: ScriptRunner;
  /** The database the outcomes (and the ledger) are in. */
  db: Database;
  /** Runs the ledger's decisions: a worker's one group committer, shared with its ledger. */
  commit?: Committer;
}

/** What an outcome does to the deal's ledger entry: nothing, note its docflow, keep the claim, or release it. */
function ledgerMode(record: OutcomeRecord, ledger: RecordOptions['ledger']): '' | 'submitted' | 'keep' | 'release' {
  if (!ledger || record.outcome === 'already_submitted') return '';
  if (SUBMITTED_OUTCOMES.has(record.outcome) && record.docflowId) return 'submitted';
  // `keep`: the claim stays (the try may have made a docflow), unless the feed already found it.
  return ledger.keepClaim ? 'keep' : 'release';
}

/**
 * The outcome's meaning for the deal's entry, in the caller's transaction: `written` (go on and
 * write the outcome), `conflict` (write it, but the deal had another docflow: the gateway holds
 * two), or `submitted` (do not: the deal has a docflow, the row records that instead).
 */
async function decideRecord(
  trx: Trx,
  db: Database,
  now: number,
  key: LedgerKey,
  batch: string,
  record: OutcomeRecord,
  ledger: NonNullable<RecordOptions['ledger']>,
  mode: 'submitted' | 'keep' | 'release',
): Promise<RecordResult> {
  if (mode === 'submitted') {
    // Nearly every outcome: the row's own try becomes the deal's docflow, one statement; the rest
    // (another docflow, no row) is decided on the row as read.
    if (await submitRowUnlessOther(trx, key, docflowOf(record, ledger), now, { batch, row: record.row })) return { kind: 'written' };
    return recordDocflow(trx, now, key, batch, record, ledger, await lockRow(trx, db.engine, key));
  }
  const e = await lockRow(trx, db.engine, key);
  // (A docflow the feed found with no row to hold it is the first asking row's.)
  const own = !!e && ((e.batch === batch && e.row === record.row) || (e.state === 'submitted' && e.batch === ''));
  if (e?.state === 'submitted') {
    const [cn, addr] = propertyArgs(ledger.property);
    if (own || (mode === 'release' && !ledger.resubmit && sameProperty(e, cn, addr))) {
      return { kind: 'submitted', own, deal: dealOf(e), via: (e.via as Via | null) ?? 'answer' };
    }
  } else if (mode === 'release' && own && e?.state === 'idle') {
    await releaseRow(trx, key, e, now);
  }
  return { kind: 'written' };
}

/** The row made this docflow: it becomes the deal's, unless the deal has another (the gateway now holds two). */
async function recordDocflow(
  trx: Trx,
  now: number,
  key: LedgerKey,
  batch: string,
  record: OutcomeRecord,
  ledger: NonNullable<RecordOptions['ledger']>,
  e: LedgerRow | undefined,
): Promise<RecordResult> {
  if (e?.state === 'submitted' && e.docflow_id !== record.docflowId) {
    // The row's results line names both (src/db/duplicates.ts); the feed follows this docflow too.
    await recordDuplicate(trx, {
      docflow_id: record.docflowId!,
      bank: key.bank,
      type: key.type,
      deal_id: key.dealId,
      kept_docflow_id: e.docflow_id ?? '',
      request_id: ledger.requestId ?? '',
      batch,
      row: record.row,
      how: 'answer',
      seen_at: now,
    });
    return { kind: 'conflict', deal: { docflowId: e.docflow_id ?? '', batch: e.batch, row: e.row } };
  }
  const docflow = docflowOf(record, ledger);
  if (e) {
    await submitRow(trx, key, docflow, now, e.batch !== batch || e.row !== record.row ? { batch, row: record.row } : {});
    return { kind: 'written' };
  }
  // The deal had no entry (an operator's import, or a ledger restored from an older copy): made now.
  const [cn, addr] = propertyArgs(ledger.property);
  await insertRow(trx, {
    bank: key.bank,
    type: key.type,
    deal_id: key.dealId,
    n: (ledger.requestId ? parseRequestId(ledger.requestId)?.n : undefined) ?? 0,
    state: 'submitted',
    batch,
    row: record.row,
    job: null,
    ...NO_TRY,
    docflow_id: docflow.docflowId,
    outcome: docflow.outcome,
    at: docflow.at,
    via: docflow.via,
    answered_at: docflow.via === 'answer' ? now : null,
    cn: cn || null,
    addr: addr || null,
    pf: null,
    prev: null,
    updated_at: now,
  });
  return { kind: 'written' };
}

/** The docflow a row's outcome names, as the ledger keeps it. */
function docflowOf(record: OutcomeRecord, ledger: NonNullable<RecordOptions['ledger']>) {
  return { docflowId: record.docflowId!, outcome: record.outcome, at: record.finishedAt, via: ledger.via ?? ('answer' as const) };
}

export function createOutcomeStore(redis: Redis, keys: Keys, options: OutcomeStoreOptions): OutcomeStore {
  const run: ScriptRunner = options.run ?? (options.batched ? createScriptBatcher(redis) : (script, k, args) => script.run(redis, k, args));
  const { db } = options;
  const commit = options.commit ?? commitAlone(db);
  return {
    async record(batch, record, options = {}) {
      const { job, ledger, ifAbsent } = options;
      const mode = ledgerMode(record, ledger);
      // The outcome and what it means for the deal's entry: one decision, one commit.
      const lock =
        ledger && mode !== ''
          ? ({ bank: ledger.bank, type: ledger.type ?? REGISTRATION, dealId: ledger.dealId ?? record.dealId } satisfies LedgerKey)
          : undefined;
      const result = await commit(lock ? keyString(lock) : `\u0001${batch}\u0000${record.row}`, async (trx, now): Promise<RecordResult> => {
        // `ifAbsent`: a row with an outcome changes nothing, in the ledger either.
        if (ifAbsent && (await readOutcome(trx, batch, record.row))) return { kind: 'exists' };
        let decided: RecordResult = { kind: 'written' };
        if (lock && ledger && mode !== '') {
          decided = await decideRecord(trx, db, now, lock, batch, record, ledger, mode);
          if (decided.kind === 'submitted') return decided;
        }
        await writeOutcome(trx, batch, record, now);
        return decided;
      });
      if (result.kind === 'submitted' || result.kind === 'exists') return result;
      await run(
        AFTER_WRITE,
        [keys.checkpoints(batch), job?.key ?? keys.checkpoints(batch), keys.rows(batch)],
        [record.row, job?.data ?? ''],
      );
      return result;
    },
    async range(batch, from, to) {
      return readOutcomeRange(db.kysely, batch, from, to);
    },
    async count(batch) {
      return countOutcomes(db.kysely, batch);
    },
  };
}
