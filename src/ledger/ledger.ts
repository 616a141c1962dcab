/**
 * Claims on deals: the one place that decides whether a row may ask the gateway for a
 * docflow, in one database transaction (claim.ts), so two rows, batches or hosts with one
 * deal send it once. A claim is written ahead of each try ("sending", with the time of the
 * database's clock) and committed before the creation call goes out: a try whose answer never
 * came (a timeout, a reset, a crash) leaves it so, and before the deal is sent again the news
 * feed must have passed that try and not shown its requestId (src/feed/). Nothing here trusts
 * the gateway to refuse a repeated requestId, nor Redis to keep anything: Redis holds the
 * batch's work (outcomes, checkpoints, jobs) and is read around the decisions, never for them.
 */
import type { Database, Trx } from '../db/database.js';
import { runCompiled } from '../db/compiled.js';
import { commitAlone, type Committer } from '../db/group-commit.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { luaFile, type ScriptRunner } from '../redis/lua.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import { readOutcome, settleUncertain } from './outcome-rows.js';
import {
  decideClaim,
  feedNotComplete,
  propertyArgs,
  type ClaimInput,
  type ClaimVerdict,
  type FeedBehind,
  type Holder,
  type NeedsHolder,
} from './claim.js';
import { REGISTRATION, type DocflowType, type LedgerEntry, type PropertyKey, type RegisteredDeal, type Via } from './entry.js';
import { entryOf, keyString, lockRow, NO_TRY, submitRow, updateRow, type LedgerKey } from './rows.js';
import { parseRequestId, propertyOf } from './entry.js';

export { propertyArgs, type ClaimVerdict };

export interface ClaimRequest {
  bank: string;
  /** The docflow type (default: a registration). */
  type?: DocflowType;
  dealId: string;
  batch: string;
  row: number;
  /** The row's job key: another row judges this one alive while it exists unfinished. */
  job: string;
  /** The batch was loaded with --resubmit: a deal submitted by another row is sent again, as n + 1. */
  resubmit: boolean;
  /** `send` claims and writes the try ahead; `check` only reconciles (the row has no tries left). */
  mode: 'send' | 'check';
  /** A cadastral number suggest just found: kept in the claim, or checkpointed when the row must wait. */
  cadastralNumber?: string;
  /**
   * The property the row is for (its cadastral number, the row's or the one suggest found, and
   * its address): kept in the entry it claims, and checked against the one a docflow was made for.
   */
  property?: PropertyKey;
  /** This run's claim, unique: run again (a lost reply) it is the same claim; only it may settle it. */
  nonce: string;
  /**
   * The filter of the deal's persons' names (src/privacy/name-filter.ts), kept in the entry: the
   * news feed masks a registry error about the deal with it, days after the deal's data is gone.
   */
  personFilter?: string;
}

export interface LedgerOptions {
  /** The gateway's per-request timeout: a try that died without an end is over after it. */
  timeoutMs: number;
  /** How long after a try's end its docflow may take to show in the feed (`--feed-lag-ms`). */
  feedLagMs: number;
  /** Runs the Redis scripts (a worker sends those of one event-loop turn together). */
  run?: ScriptRunner;
  /** Runs the database's decisions (a worker commits those of one event-loop turn together). */
  commit?: Committer;
}

/** What a job learns before it asks suggest: its outcome, its cadastral number (its checkpoint's, or its own claim's), its deal's entry. */
export interface Lookup {
  earlier: OutcomeRecord | undefined;
  cadastralNumber: string | undefined;
  entry: LedgerEntry | undefined;
}

export interface Ledger {
  claim(request: ClaimRequest): Promise<ClaimVerdict>;
  /**
   * After a try that made no docflow (`definite`: an answer that says so) or may have
   * (`uncertain`: no answer, or one that cannot be read): the claim stays the row's.
   */
  settle(
    bank: string,
    dealId: string,
    requestId: string,
    batch: string,
    row: number,
    nonce: string,
    how: 'definite' | 'uncertain',
    type?: DocflowType,
  ): Promise<void>;
  lookup(bank: string, dealId: string, batch: string, row: number, type?: DocflowType): Promise<Lookup>;
  /** Keeps the cadastral number suggest found until the row's outcome (a job put back before its claim). */
  checkpoint(batch: string, row: number, cadastralNumber: string): Promise<void>;
  read(bank: string, dealId: string, type?: DocflowType): Promise<LedgerEntry | undefined>;
  /**
   * An operator's answer for a try the feed could not tell about (`realty-batch ledger
   * --resolve`): the gateway has this docflow for it (the row holding the claim gets it in
   * place of ERR_UNCERTAIN), or it has none (the deal may be sent again). `not-waiting` when the
   * deal has no try waiting for an answer; `in-flight` while its try may still be answered (it
   * began less than its time-out ago and did not end): nothing is changed then.
   */
  resolve(
    bank: string,
    dealId: string,
    answer: { docflowId: string; outcome: 'queued' | 'suspended' } | 'none',
    type?: DocflowType,
  ): Promise<'resolved' | 'not-waiting' | 'in-flight'>;
}

/** Whether the holder's job still runs: src/redis/lua/job-runs.lua. */
const JOB_RUNS = luaFile('job-runs');

/** Outcomes a row's job that runs again keeps: its deal is at the registry. */
const FINAL_OUTCOMES: ReadonlySet<string> = new Set(['queued', 'suspended', 'already_submitted']);

/**
 * The row's cadastral number kept until its outcome (src/redis/lua/row-checkpoint.lua), for a
 * row that runs again without a claim of its own to read it from: one put back by the rate, one
 * that waits for another row holding its deal, for a try to show in the feed, or for the feed.
 * A row whose claim went through finds it in the claim (`lookup`).
 */
const CHECKPOINT = luaFile('row-checkpoint');
const WAITS: ReadonlySet<string> = new Set(['wait', 'reconcile', 'behind']);

/** What the claim's decision reads of a request: its property as the ledger keeps it. */
function claimInput(key: LedgerKey, r: ClaimRequest, options: LedgerOptions): ClaimInput {
  const [cn, addr] = propertyArgs(r.property);
  const { batch, row, job, resubmit, mode, nonce } = r;
  const { timeoutMs, feedLagMs } = options;
  return { key, batch, row, job, resubmit, mode, cn, addr, nonce, personFilter: r.personFilter ?? '', timeoutMs, feedLagMs };
}

export function createLedger(redis: Redis, keys: Keys, db: Database, options: LedgerOptions): Ledger {
  const run: ScriptRunner = options.run ?? ((script, k, args) => script.run(redis, k, args));
  const commit = options.commit ?? commitAlone(db);
  const keyOf = (bank: string, dealId: string, type: DocflowType = REGISTRATION): LedgerKey => ({ bank, type, dealId });
  return {
    async claim(r) {
      const key = keyOf(r.bank, r.dealId, r.type);
      const input = claimInput(key, r, options);
      let holder: Holder | undefined;
      for (;;) {
        const verdict = await commit(keyString(key), async (trx, now): Promise<ClaimVerdict | NeedsHolder | FeedBehind> => {
          // The row's outcome when it has a final one (its job ran again): nothing to claim.
          const earlier = await readOutcome(trx, r.batch, r.row);
          if (earlier && FINAL_OUTCOMES.has(earlier.outcome)) return { kind: 'done' as const, record: earlier };
          return decideClaim(trx, db.engine, now, input, holder);
        });
        // A row that will run again before it has a claim of its own keeps the number suggest found.
        if (r.cadastralNumber && WAITS.has(verdict.kind))
          await run(CHECKPOINT, [keys.checkpoints(r.batch), keys.batch(r.batch)], [r.row, r.cadastralNumber]);
        // The feed is not known complete: thrown, so the row waits without spending a try.
        if (verdict.kind === 'behind') throw feedNotComplete(verdict);
        if (verdict.kind !== 'holder') return verdict;
        // Whether the row holding the deal still runs: read outside the transaction, it only
        // chooses between waiting and taking over; the decision is made again with it.
        const alive = Number(await run(JOB_RUNS, [verdict.job], [])) === 1 && !(await readOutcome(db.kysely, verdict.batch, verdict.row));
        holder = { job: verdict.job, batch: verdict.batch, row: verdict.row, alive };
      }
    },
    async settle(bank, dealId, requestId, batch, row, nonce, how, type) {
      // The requestId names the type (src/realty/request-id.ts).
      const key = keyOf(bank, dealId, type ?? parseRequestId(requestId)?.type);
      await commit(keyString(key), async (trx, now) => {
        const e = await lockRow(trx, db.engine, key);
        // Only the run that made the claim settles it: a run whose job was taken over (it lost its
        // lock, then came back) can never mark another run's try as done.
        if (!e || e.state !== 'sending' || entryOf(e).requestId !== requestId || e.batch !== batch || e.row !== row || e.nonce !== nonce)
          return;
        await updateRow(trx, key, how === 'definite' ? { state: 'idle', ...NO_TRY, updated_at: now } : { end_at: now, updated_at: now });
      });
    },
    async lookup(bank, dealId, batch, row, type) {
      const [earlier, checkpoint, entry] = await Promise.all([
        readOutcome(db.kysely, batch, row),
        redis.hget(keys.checkpoints(batch), String(row)),
        readKey(db.kysely, keyOf(bank, dealId, type)),
      ]);
      // A claim the row made keeps its property: the number suggest found needs no copy in Redis.
      const claimed = entry && entry.batch === batch && entry.row === row ? entry.property?.cadastralNumber : undefined;
      return { earlier, cadastralNumber: checkpoint || claimed, entry };
    },
    async checkpoint(batch, row, cadastralNumber) {
      await run(CHECKPOINT, [keys.checkpoints(batch), keys.batch(batch)], [row, cadastralNumber]);
    },
    async read(bank, dealId, type) {
      return readKey(db.kysely, keyOf(bank, dealId, type));
    },
    async resolve(bank, dealId, answer, type) {
      const key = keyOf(bank, dealId, type);
      const at = new Date().toISOString();
      const result = await commitAlone(db)(keyString(key), async (trx, now) => {
        const e = await lockRow(trx, db.engine, key);
        if (!e || (e.state !== 'sending' && e.state !== 'idle')) return 'not-waiting' as const;
        if (e.state === 'sending' && e.end_at === null && now < Number(e.try_at ?? 0) + (e.timeout_ms ?? 0)) return 'in-flight' as const;
        if (answer === 'none') {
          // `via`: an operator said so; a docflow of this try the feed shows later overrules it, loudly (feed-page.ts).
          await updateRow(trx, key, { state: 'idle', ...NO_TRY, via: 'operator', updated_at: now });
          return 'resolved' as const;
        }
        await submitRow(trx, key, { docflowId: answer.docflowId, outcome: answer.outcome, at, via: 'operator' }, now);
        // The row holding the claim, if it ended ERR_UNCERTAIN, learns its docflow in the same commit.
        if (e.batch !== '') {
          const message = `its docflow was named by an operator (${at}) after the gateway was checked`;
          await settleUncertain(trx, e.batch, e.row, { outcome: answer.outcome, docflowId: answer.docflowId, message }, now);
        }
        return 'resolved' as const;
      });
      return result;
    },
  };
}

/** What the ledger holds of a bank's deal of one type (default: its registration). */
export async function readEntry(
  db: Database,
  bank: string,
  dealId: string,
  type: DocflowType = REGISTRATION,
): Promise<LedgerEntry | undefined> {
  return readKey(db.kysely, { bank, type, dealId });
}

async function readKey(db: Trx, key: LedgerKey): Promise<LedgerEntry | undefined> {
  // Compiled once (src/db/compiled.ts): a job's later runs look their deal up before suggest.
  const [row] = await runCompiled(db, 'readKey', [key.bank, key.type, key.dealId], () =>
    db.selectFrom('ledger').selectAll().where('bank', '=', key.bank).where('type', '=', key.type).where('deal_id', '=', key.dealId),
  );
  return row && entryOf(row);
}

/** Per query, at most this many deals (SQLite allows 32,766 bound values; PostgreSQL 65,535). */
const READ_CHUNK = 500;

/** For the load: each deal's docflow when it has one (one query a chunk). */
export async function readSubmittedDeals(
  db: Database,
  bank: string,
  dealIds: readonly string[],
  type: DocflowType = REGISTRATION,
): Promise<Array<RegisteredDeal | undefined>> {
  const found = new Map<string, RegisteredDeal>();
  for (let from = 0; from < dealIds.length; from += READ_CHUNK) {
    const chunk = dealIds.slice(from, from + READ_CHUNK);
    const rows = await db.kysely
      .selectFrom('ledger')
      .select(['deal_id', 'docflow_id', 'outcome', 'batch', 'row', 'at', 'via', 'cn', 'addr'])
      .where('bank', '=', bank)
      .where('type', '=', type)
      .where('deal_id', 'in', chunk)
      .where('state', '=', 'submitted')
      .execute();
    for (const r of rows) {
      if (!r.docflow_id) continue;
      const property = propertyOf(r.cn, r.addr);
      found.set(r.deal_id, {
        docflowId: r.docflow_id,
        outcome: r.outcome === 'suspended' ? 'suspended' : 'queued',
        batch: r.batch,
        row: r.row,
        at: r.at ?? '',
        via: r.via === 'feed' || r.via === 'operator' ? r.via : 'answer',
        ...(property && { property }),
      });
    }
  }
  return dealIds.map((d) => found.get(d));
}

export type { Via };
