/**
 * `retry`: the rows of a batch that ended with given outcomes go around again, and
 * (`--missing`) rows left with neither a job nor an outcome get their jobs back.
 * `pending` names the rows without an outcome yet: those whose job still waits or runs
 * are left alone (on their way), those whose job was lost get it back.
 * Their deals are read again from the batch's input (checked unchanged), since a
 * finished job keeps no personal data. Safe to repeat: a row whose job is already
 * on its way is left alone, and a deal that reached the registry is never sent
 * again (the worker claims it in the ledger first). A row whose last try may have
 * made a docflow (ERR_UNCERTAIN) is looked up in the ledger first: when the news
 * feed has found its docflow since, the row gets it here, without a job.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { RedisClient as Redis } from '../redis/connection.js';
import { UsageError } from '../errors.js';
import { parseReading, reopenInput } from '../input/reading-options.js';
import { checkedProfile, orderOf } from './load-type.js';
import { createDealValidator } from '../input/validate-deal.js';
import { DEFAULT_KIND, kindOf, namesFiles, parseRequestId, rowDocuments } from '../docflows/registry.js';
import { createDocumentFileChecker } from '../input/document-files.js';
import type { Logger } from '../logger.js';
import { createBatchStore, noSuchBatch, type BatchMeta } from './batch-store.js';
import { createOutcomeStore, type OutcomeStore } from '../outcomes/store.js';
import { deleteOutcomeIf } from '../ledger/outcome-rows.js';
import type { BankProfile } from '../input/profile.js';
import { alreadySubmitted, ATTENTION_OUTCOMES, ownDocflow, type Outcome, type OutcomeRecord } from '../domain/outcome.js';
import { readEntry } from '../ledger/ledger.js';
import type { Database } from '../db/database.js';
import { findMissingRows } from './missing-rows.js';
import { DEAL_JOB, dealJobId, dealJobOptions, storedJobData, type DealJobData } from '../queue/job-data.js';
import type { Keys } from '../redis/keys.js';
import { openQueue } from '../queue/deal-queue.js';
import { registryAnswerCouldDiffer, type RegistryQuery, type UnchangedRow } from './retry-unchanged.js';

export const DEFAULT_RETRY_OUTCOMES: readonly Outcome[] = ['unavailable', 'failed'];
/** Outcomes that cannot succeed unchanged: sent again only with --force. */
export const UNCHANGEABLE_OUTCOMES: ReadonlySet<Outcome> = new Set(['invalid', 'rejected']);

export interface RetryOptions {
  redis: Redis;
  keys: Keys;
  /** The ledger's database. */
  db: Database;
  batch: string;
  outcomes: readonly Outcome[];
  /** Also the rows with neither a job nor an outcome (their jobs were removed from outside). */
  missing?: boolean;
  force?: boolean;
  /** The registry's query for a deal as read now: a not_found row asked otherwise is sent again (retry-unchanged.ts). */
  registryQuery?: RegistryQuery;
  /** The batch input, when it is no longer where it was loaded from. */
  input?: string;
  /**
   * The bank profile, read from `--profile`: needed when Redis no longer holds the batch's
   * (emptied or restarted), and then for the same bank (its INN) as the batch was loaded for.
   */
  profile?: { file: string; profile: BankProfile };
  logger: Logger;
}

export interface RetrySummary {
  batch: string;
  /** Rows with one of the outcomes. */
  selected: number;
  /** Sent around again. */
  requeued: number;
  /** Already on their way (waiting, delayed or active): left alone. */
  alreadyGoing: number;
  /** Invalid rows that are still invalid in the input: they need fixing, not a retry. */
  stillInvalid: number;
  /** Rows without a job or an outcome among the selected. */
  missing: number;
  /** Uncertain rows whose docflow the news feed found since: their outcome written, no job. */
  reconciled: number;
  /** not_found and ambiguous rows whose question to the registry is unchanged: not sent again (without --force). */
  unchanged: UnchangedRow[];
}

/** Outcomes of rows whose last try may have reached the gateway. */
const UNCERTAIN_CODES: ReadonlySet<string> = new Set(['ERR_UNCERTAIN', 'ERR_JOB_STALLED']);

export async function retryBatch(options: RetryOptions): Promise<RetrySummary> {
  const { redis, keys, batch } = options;
  checkOutcomes(options.outcomes, options.force === true);
  const batches = createBatchStore(redis, keys, options.db);
  const meta = await batches.get(batch);
  if (!meta) throw noSuchBatch(redis, keys, batch);
  if (meta.state !== 'loaded' || meta.total === undefined)
    throw new UsageError(`Batch ${batch} has not finished loading; nothing to retry yet.`);

  const store = createOutcomeStore(redis, keys, { db: options.db });
  const selected = await selectRows(options, store, meta.total);
  let missing = 0;
  if (options.missing) {
    const found = await findMissingRows(redis, keys, options.db, batch, meta.total, Number.MAX_SAFE_INTEGER);
    for (const row of found.rows) selected.set(row, undefined);
    missing = found.count;
  }
  const summary: RetrySummary = {
    batch,
    selected: selected.size,
    requeued: 0,
    alreadyGoing: 0,
    stillInvalid: 0,
    missing,
    reconciled: 0,
    unchanged: [],
  };
  if (selected.size === 0) return summary;

  await profileFor(options, meta, batches);
  const bank = meta.bank ?? (await batches.profile(batch))?.organization.inn;
  if (bank) summary.reconciled = await reconcileUncertain(options, store, selected, bank, meta.resubmit === true, meta.type);
  if (selected.size === 0) return summary;

  await requeue(options, meta, selected, summary);
  options.logger.info({ ...summary, unchanged: summary.unchanged.length }, 'batch rows sent around again');
  return summary;
}

/**
 * The batch's profile is in Redis for its workers. Redis lost it (emptied, restarted): `--profile`
 * gives it back, refused when it is another bank's (the batch knows its INN, never the profile's
 * personal data). A profile changed since the load (the representative's new passport) is taken,
 * said in the log.
 */
async function profileFor(options: RetryOptions, meta: BatchMeta, batches: ReturnType<typeof createBatchStore>): Promise<void> {
  const given = options.profile;
  if (!given) {
    if (await batches.profile(meta.id)) return;
    throw new UsageError(
      `Batch ${meta.id}'s bank profile is no longer in Redis (Redis was emptied or restarted without its data); give it again: realty-batch retry ${meta.id} ${retryFlags(options)}--profile ${meta.profilePath || '<bank.json>'}.`,
    );
  }
  const inn = given.profile.organization.inn;
  if (meta.bank && inn !== meta.bank) {
    throw new UsageError(
      `--profile ${given.file} is for the bank with INN ${inn}, but batch ${meta.id} was loaded for INN ${meta.bank}${meta.profilePath ? ` (from ${meta.profilePath})` : ''}: give that bank's profile.`,
    );
  }
  if (meta.profileSha256 && (await sha256Of(given.file)) !== meta.profileSha256)
    options.logger.warn(
      { batch: meta.id },
      'the profile given differs from the one the batch was loaded with (same bank): its rows are sent with the one given',
    );
  // Checked as at load: a lift's power of attorney by file is hashed here for its workers to upload.
  await batches.restoreProfile(meta.id, await checkedProfile({ profile: given.profile, profileFile: given.file, kind: kindOf(meta.type) }));
}

function retryFlags(options: RetryOptions): string {
  return `${options.missing ? '--missing ' : ''}${options.outcomes.map((o) => `--outcome ${o} `).join('')}`;
}

async function sha256Of(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

/** What `--outcome` takes: the outcomes that need attention, and rows still without one. */
export const RETRYABLE_OUTCOMES: ReadonlySet<Outcome> = new Set([...ATTENTION_OUTCOMES, 'pending']);

/** Only rows that need attention (or have no outcome yet) are retried; invalid and rejected ones only with --force. */
function checkOutcomes(outcomes: readonly Outcome[], force: boolean): void {
  const wrong = outcomes.filter((o) => !RETRYABLE_OUTCOMES.has(o));
  if (wrong.length > 0)
    throw new UsageError(
      `--outcome ${wrong.join(', ')}: only rows that need attention or are pending can be retried (${[...RETRYABLE_OUTCOMES].join(', ')}).`,
    );
  const unchangeable = outcomes.filter((o) => UNCHANGEABLE_OUTCOMES.has(o));
  if (unchangeable.length > 0 && !force) {
    throw new UsageError(
      `Rows ${unchangeable.join(' and ')} cannot succeed unchanged: correct them in the attention file and load it; --force sends them again anyway.`,
    );
  }
}

/**
 * The rows to send again, with the outcome each has now, read in pages. A pending row has
 * none: requeue leaves it alone while its job waits or runs, and gives it back when lost.
 */
async function selectRows(options: RetryOptions, store: OutcomeStore, total: number): Promise<Map<number, OutcomeRecord | undefined>> {
  const wanted = new Set<Outcome>(options.outcomes);
  const selected = new Map<number, OutcomeRecord | undefined>();
  const PAGE = 1000;
  for (let from = 1; from <= total; from += PAGE) {
    const page = await store.range(options.batch, from, Math.min(total, from + PAGE - 1));
    for (let i = 0; i < Math.min(PAGE, total - from + 1); i++) {
      const r = page[i];
      if (r ? wanted.has(r.outcome) : wanted.has('pending')) selected.set(from + i, r);
    }
  }
  return selected;
}

/**
 * Rows whose last try may have made a docflow: the ledger knows by now if the feed showed
 * it. Those get that docflow as their outcome and leave `selected`; returns how many.
 */
async function reconcileUncertain(
  options: RetryOptions,
  store: OutcomeStore,
  selected: Map<number, OutcomeRecord | undefined>,
  bank: string,
  resubmit: boolean,
  type: string | undefined,
): Promise<number> {
  const { batch } = options;
  let reconciled = 0;
  for (const [row, earlier] of selected) {
    if (!earlier || !UNCERTAIN_CODES.has(earlier.errorCode ?? '')) continue;
    // An extract's entry is keyed by more than its dealId: the requestId of its try names the key.
    const key = (earlier.requestId && parseRequestId(earlier.requestId)?.dealId) || earlier.dealId;
    const entry = await readEntry(options.db, bank, key, kindOf(type).type);
    if (entry?.state !== 'submitted' || !entry.docflowId || !entry.outcome) continue;
    const made = { docflowId: entry.docflowId, outcome: entry.outcome, batch: entry.batch, row: entry.row, at: entry.at ?? '' };
    const own = entry.batch === batch && entry.row === row;
    if (!own && resubmit) continue;
    const record = own
      ? ownDocflow(row, earlier.dealId, made, entry.via ?? 'answer', earlier.attempts)
      : alreadySubmitted(row, earlier.dealId, made, earlier.attempts);
    await store.record(batch, record, own ? { ledger: { bank, resubmit, requestId: entry.requestId, via: entry.via ?? 'answer' } } : {});
    selected.delete(row);
    reconciled++;
  }
  return reconciled;
}

/**
 * Where a row's relative file paths start: the folder the batch was loaded from, as at the load,
 * while it is there (a nightly tick moves its input alone to `.realty/processed/`, and `--input`
 * then names the moved file, not the documents' folder); the `--input`'s folder once it is gone
 * (the whole folder moved).
 */
async function documentsFolder(loadedFrom: string, input: string | undefined): Promise<string> {
  const original = dirname(resolve(loadedFrom));
  if (input === undefined || (await stat(original).catch(() => undefined))?.isDirectory()) return original;
  return dirname(resolve(input));
}

const GOING: ReadonlySet<string> = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** Reads the input again and gives each selected row that is still valid a new job. */
async function requeue(
  options: RetryOptions,
  meta: BatchMeta,
  selected: Map<number, OutcomeRecord | undefined>,
  summary: RetrySummary,
): Promise<void> {
  const { redis, keys, batch } = options;
  const input = await reopenInput(meta, options.input);
  const kind = kindOf(meta.type);
  const order = orderOf({ batch, again: parseReading(meta.reading).again }, meta.createdAt);
  const validate = createDealValidator({ own: kind.own, order });
  // A row's files are checked (and hashed) again, as the load did: a worker uploads only checked files.
  const checkFiles = createDocumentFileChecker({
    baseDir: await documentsFolder(meta.file, options.input),
    documentsOf: rowDocuments,
    // The load's --files-root: a row it accepted with a file there is accepted again.
    ...(meta.filesRoot !== undefined && { filesRoot: meta.filesRoot }),
  });
  const queue = openQueue(redis, keys);
  try {
    for await (const record of input.records()) {
      // Every record is validated, in order, so that a repeated dealId stays refused.
      const result = validate(record.fields);
      if (!selected.has(record.row)) continue;
      const earlier = selected.get(record.row);
      if (!result.ok || record.problems.length > 0) {
        summary.stillInvalid++;
        continue;
      }
      if (namesFiles(result.deal) && (await checkFiles(result.deal)).length > 0) {
        summary.stillInvalid++;
        continue;
      }
      // The registry's answer to an unchanged question is the same answer: not asked again.
      if (earlier && !registryAnswerCouldDiffer(earlier, result.deal, options)) {
        summary.unchanged.push({ row: record.row, dealId: earlier.dealId, outcome: earlier.outcome });
        continue;
      }
      const id = dealJobId(batch, result.deal.dealId);
      const state = await queue.getJobState(id);
      // Another retry or a worker may hold the job this very moment: then it is on its way.
      if (GOING.has(state) || (state !== 'unknown' && (await queue.remove(id).catch(() => 0)) !== 1)) {
        summary.alreadyGoing++;
        continue;
      }
      const data: DealJobData = { batch, row: record.row, dealId: result.deal.dealId, deal: result.deal };
      // A batch loaded with --resubmit is retried as it was loaded (the ledger keeps its try's requestId).
      if (meta.resubmit) data.resubmit = true;
      if (kind !== DEFAULT_KIND) data.type = kind.type;
      const key = kind.ledgerKey?.(result.deal);
      if (key !== undefined) data.key = key;
      // The row index names the row's deal again while it has no outcome (the outcome's write took
      // it out, and the index's key with its last entry): with the batch's expiry, as the load gave it.
      await redis.hset(keys.rows(batch), String(record.row), data.dealId);
      if (meta.expiresAt !== undefined) await redis.pexpireat(keys.rows(batch), meta.expiresAt);
      await queue.add(DEAL_JOB, storedJobData(data), { ...dealJobOptions(), jobId: id });
      // The row is pending again, unless its new outcome is already in.
      if (earlier) await deleteOutcomeIf(options.db.kysely, batch, earlier);
      summary.requeued++;
    }
  } finally {
    await queue.close();
  }
}
