/**
 * The database's cost (issue 38 point 7, issue 43 point 3): a deal's claim and its outcome, as
 * the worker writes them (createLedger's `claim`, createOutcomeStore's `record` with the ledger,
 * one script batcher and one group committer shared by both), on SQLite and on PostgreSQL,
 * against today's Redis-only equivalent measured in the same run.
 *
 * The Redis-only claim and outcome scripts left the code with the ledger's move (e4269de); the
 * baseline is their path for a new deal as two EVALs (REDIS_CLAIM, REDIS_RECORD): the same
 * reads, HSETs, expiries and deletions in the same order, through the same batcher.
 *
 * A run: each side's claims of `deals` deals, `IN_FLIGHT` at a time (the worker's concurrency),
 * then their outcomes (queued, with a docflow). Per deal: the CPU of this process and of the
 * servers it wrote to (the bench's redis-server; PostgreSQL's backends of the bench's
 * database), and each call's latency (p50, p99). Without a gateway call between the two the
 * writes come back to back: the group commit's batches are as large as the 0 ms worker's.
 */
import { randomUUID } from 'node:crypto';
import { TUNABLES } from '../src/config.js';
import { createCommitter } from '../src/db/group-commit.js';
import { ensureFeed } from '../src/feed/feed-store.js';
import { propertyKeyOf, type PropertyKey } from '../src/input/property-key.js';
import { createDealValidator } from '../src/input/validate-deal.js';
import { createLedger } from '../src/ledger/ledger.js';
import { propertyArgs } from '../src/ledger/claim.js';
import { createOutcomeStore } from '../src/outcomes/store.js';
import type { OutcomeRecord } from '../src/domain/outcome.js';
import { personsOf } from '../src/privacy/persons.js';
import { personFilter } from '../src/privacy/name-filter.js';
import { dealJobId } from '../src/queue/job-data.js';
import type { RealtyClient } from '../src/realty/client.js';
import type { RedisClient } from '../src/redis/connection.js';
import { createKeys, type Keys } from '../src/redis/keys.js';
import { createScriptBatcher, luaScript, type ScriptRunner } from '../src/redis/lua.js';
import type { BenchContext } from './context.js';
import { keepFeedComplete, type BenchDatabase } from './database.js';
import { createDealGenerator, HEADER } from './generate.js';
import { collectGarbage, median, progress, round, type Figure } from './measure.js';
import { cpuBetween, cpuOf } from './server-cpu.js';

/**
 * Deals a run. PostgreSQL's side takes the longest (about 2 ms of CPU a deal on two shared
 * cores); the quick profile's 2,000 still give a p99 of 20 calls.
 */
const DEALS = { quick: 2_000, full: 10_000 };
const WARM_UP_DEALS = 500;
/** Calls in flight: the worker's concurrency in the bench (bench/workers.ts). */
const IN_FLIGHT = 100;
const BATCH = 'bench';
/** A ledger entry's life in Redis, as the Redis-only ledger kept it (400 days). */
const LEDGER_MS = 400 * 24 * 3600 * 1000;
/** How often the feed's row is marked read complete during the project's writes (the follower's default poll is 1 s). */
const FEED_READ_MS = 250;

type Side = 'redis' | 'sqlite' | 'postgres';
type Write = 'claim' | 'outcome';

/** A deal's arguments, made before the clock starts. */
interface BenchDeal {
  dealId: string;
  row: number;
  cn: string;
  property: PropertyKey;
  personFilter: string;
  docflowId: string;
}

interface Phase {
  /** µs of this process's CPU a deal (user + system, GC threads included). */
  clientUs: number;
  /** µs of the servers' CPU a deal (redis-server; PostgreSQL's backends). */
  serverUs: number;
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
}

type Run = Record<Write, Phase>;

/** The writes of one side, on a fresh prefix and an empty database. */
interface Writer {
  claim(i: number): Promise<void>;
  outcome(i: number): Promise<void>;
  /** The servers' CPU so far (ns by process id). */
  serverCpu(): Promise<Map<number, number>>;
  /** Checks every deal was claimed and recorded, then empties what the run wrote. */
  finish(): Promise<void>;
}

export async function dbWritesFigures(ctx: BenchContext): Promise<Figure[]> {
  const deals = ctx.full ? DEALS.full : DEALS.quick;
  const sides: Array<{ side: Side; database?: BenchDatabase }> = [
    { side: 'redis' },
    { side: 'sqlite', database: ctx.database },
    { side: 'postgres', database: ctx.postgres },
  ];
  const made = makeDeals(ctx, deals);
  const runs: Record<Side, Run[]> = { redis: [], sqlite: [], postgres: [] };
  for (const { side, database } of sides) await measure(ctx, side, database, made.slice(0, WARM_UP_DEALS), `WW${side[0]}`);
  progress(`database writes warm-up: ${WARM_UP_DEALS.toLocaleString('en-US')} deals each side, not counted`);
  for (let run = 1; run <= ctx.runs; run++) {
    for (const { side, database } of sides) runs[side].push(await measure(ctx, side, database, made, `W${side[0]}${run}`));
    progress(
      `database writes run ${run}/${ctx.runs}, ${deals.toLocaleString('en-US')} deals, ${IN_FLIGHT} in flight: ${sides.map(({ side }) => `${side} ${describe(runs[side].at(-1)!)}`).join('; ')}`,
    );
  }
  const figures: Figure[] = [];
  for (const engine of ['sqlite', 'postgres'] as const) {
    for (const write of ['claim', 'outcome'] as const) {
      const project = runs[engine].map((r) => r[write]);
      const baseline = runs.redis.map((r) => r[write]);
      const details = {
        engine,
        method: `${deals} deals a run, ${IN_FLIGHT} in flight, the ${write}s of all, then the next write; ${engine === 'sqlite' ? 'SQLite in a file under /dev/shm (WAL, synchronous=FULL)' : 'PostgreSQL on this host (its data directory on its disk), a pool of the work command’s size'}, one script batcher and one group committer as createDealWorker makes them; baseline: the Redis-only ${write} script's path for a new deal (an EVAL with the same commands; the script itself left with the ledger's move), through the same batcher`,
        clientUsMeasured: project.map((p) => round(p.clientUs)),
        serverUsMeasured: project.map((p) => round(p.serverUs)),
        clientUsBaseline: baseline.map((p) => round(p.clientUs)),
        serverUsBaseline: baseline.map((p) => round(p.serverUs)),
        p50MsMeasured: project.map((p) => round(p.p50Ms)),
        p50MsBaseline: baseline.map((p) => round(p.p50Ms)),
        perSecondMeasured: project.map((p) => round(p.perSecond)),
        perSecondBaseline: baseline.map((p) => round(p.perSecond)),
      };
      figures.push(
        lowerRatio(
          `db-${write}-cpu-ratio-${engine}`,
          project.map(cpuUs),
          baseline.map(cpuUs),
          'µs/deal',
          `CPU a deal of the ${write} on ${engine} (this process and the servers written to) over the same of the Redis script`,
          details,
        ),
        lowerRatio(
          `db-${write}-p99-ratio-${engine}`,
          project.map((p) => p.p99Ms),
          baseline.map((p) => p.p99Ms),
          'ms',
          `p99 latency of a deal's ${write} on ${engine} over the Redis script's`,
          { engine },
        ),
      );
    }
  }
  return figures;
}

const cpuUs = (p: Phase): number => p.clientUs + p.serverUs;

/** A ratio where lower is better; the value is the median of the paired runs' ratios. */
function lowerRatio(
  name: string,
  project: number[],
  baseline: number[],
  rawUnit: string,
  note: string,
  details: Record<string, unknown>,
): Figure {
  const ratios = project.map((p, i) => p / baseline[i]!);
  return {
    name,
    value: round(median(ratios)),
    unit: 'ratio',
    baseline: round(median(baseline)),
    target: null,
    better: 'lower',
    measured: round(median(project)),
    rawUnit,
    runs: project.length,
    samples: ratios.map(round),
    note,
    details,
  };
}

const describe = (r: Run): string =>
  `claim ${Math.round(cpuUs(r.claim))} µs (${Math.round(r.claim.serverUs)} in servers), p99 ${r.claim.p99Ms.toFixed(1)} ms; outcome ${Math.round(cpuUs(r.outcome))} µs (${Math.round(r.outcome.serverUs)}), p99 ${r.outcome.p99Ms.toFixed(1)} ms`;

function makeDeals(ctx: BenchContext, count: number): BenchDeal[] {
  const generator = createDealGenerator({ tag: 'DBW' });
  const validate = createDealValidator();
  const made: BenchDeal[] = [];
  for (let i = 0; i < count; i++) {
    const cells = generator.row(i);
    const result = validate(Object.fromEntries(HEADER.map((h, c) => [h, cells[c] ?? ''])));
    if (!result.ok) throw new Error(`database writes: generated row ${i + 1} is invalid: ${JSON.stringify(result.problems)}`);
    const deal = result.deal;
    const cn = deal.cadastralNumber ?? `77:01:0001001:${i + 1}`;
    made.push({
      dealId: deal.dealId,
      row: i + 1,
      cn,
      property: propertyKeyOf(deal, cn),
      personFilter: personFilter(personsOf(deal, ctx.profile)),
      docflowId: randomUUID(),
    });
  }
  return made;
}

async function measure(ctx: BenchContext, side: Side, database: BenchDatabase | undefined, deals: BenchDeal[], tag: string): Promise<Run> {
  const prefix = `bench-${tag.toLowerCase()}`;
  const keys = createKeys(prefix);
  const redis = await ctx.redis.connect();
  try {
    await prepareRedis(redis, keys, deals);
    const writer = database ? await projectWriter(ctx, redis, keys, database, deals) : redisWriter(ctx, redis, keys, deals);
    const claim = await phase(deals.length, (i) => writer.claim(i), writer.serverCpu);
    const outcome = await phase(deals.length, (i) => writer.outcome(i), writer.serverCpu);
    await writer.finish();
    return { claim, outcome };
  } finally {
    await redis.quit();
    await ctx.redis.clear(prefix);
    await database?.clear();
  }
}

/** Runs `write` for deals 0..n-1, IN_FLIGHT at a time: the CPU a deal and each call's latency. */
async function phase(n: number, write: (i: number) => Promise<void>, serverCpu: () => Promise<Map<number, number>>): Promise<Phase> {
  const latencies = new Float64Array(n);
  collectGarbage();
  const serversBefore = await serverCpu();
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const at = performance.now();
      await write(i);
      latencies[i] = performance.now() - at;
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, n) }, lane));
  const cpu = process.cpuUsage(cpuBefore);
  const wall = performance.now() - started;
  const serversAfter = await serverCpu();
  latencies.sort();
  return {
    clientUs: (cpu.user + cpu.system) / n,
    serverUs: cpuBetween(serversBefore, serversAfter) / 1000 / n,
    p50Ms: latencies[Math.floor(n * 0.5)]!,
    p99Ms: latencies[Math.min(n - 1, Math.floor(n * 0.99))]!,
    perSecond: n / (wall / 1000),
  };
}

const jobKeyOf = (keys: Keys, d: BenchDeal): string => `${keys.bullPrefix}:${keys.queueName}:${dealJobId(BATCH, d.dealId)}`;
/** A finished job's data without its deal, as the outcome's script writes it. */
const jobDataOf = (d: BenchDeal): string => JSON.stringify({ batch: BATCH, row: d.row, dealId: d.dealId });

/** What a loaded batch has in Redis that the writes touch: its hash's expiry, each row's job with its deal (about 600 bytes). */
async function prepareRedis(redis: RedisClient, keys: Keys, deals: BenchDeal[]): Promise<void> {
  const packed = 'x'.repeat(600);
  const pipeline = redis.pipeline();
  pipeline.hset(keys.batch(BATCH), 'expiresAt', String(Date.now() + 7 * 24 * 3600 * 1000));
  for (const d of deals) pipeline.hset(jobKeyOf(keys, d), 'data', packed, 'name', 'deal');
  await pipeline.exec();
}

/** The project's writes on `database`: the ledger's claim, the outcome's record, as createDealWorker makes them. */
async function projectWriter(
  ctx: BenchContext,
  redis: RedisClient,
  keys: Keys,
  database: BenchDatabase,
  deals: BenchDeal[],
): Promise<Writer> {
  const db = database.db;
  const scripts: ScriptRunner = createScriptBatcher(redis);
  const commit = createCommitter(db);
  const ledger = createLedger(redis, keys, db, { timeoutMs: 30_000, feedLagMs: TUNABLES.feedLagMs, run: scripts, commit });
  const outcomes = createOutcomeStore(redis, keys, { run: scripts, db, commit });
  // The feed's cursor, as the first claim of a deployment takes it (no gateway: the bench's stub's token).
  await ensureFeed(db, { news: () => Promise.resolve({ items: [], lastToken: 'bench' }) } as unknown as RealtyClient);
  // A claim needs the feed read complete within two poll intervals: what the follower's empty
  // reads would write (one small UPDATE every FEED_READ_MS, a few a second beside the writes).
  const stopFeed = keepFeedComplete(db, FEED_READ_MS);
  const bank = ctx.profile.organization.inn;
  const requestIds: string[] = [];
  const finishedAt = new Date().toISOString();
  return {
    async claim(i) {
      const d = deals[i]!;
      const verdict = await ledger.claim({
        bank,
        dealId: d.dealId,
        batch: BATCH,
        row: d.row,
        job: jobKeyOf(keys, d),
        resubmit: false,
        mode: 'send',
        nonce: randomUUID(),
        cadastralNumber: d.cn,
        property: d.property,
        personFilter: d.personFilter,
      });
      if (verdict.kind !== 'send')
        throw new Error(`database writes (${database.engine}): row ${d.row}'s claim was ${verdict.kind}, not send`);
      requestIds[i] = verdict.requestId;
    },
    async outcome(i) {
      const d = deals[i]!;
      const record: OutcomeRecord = {
        row: d.row,
        dealId: d.dealId,
        outcome: 'queued',
        docflowId: d.docflowId,
        cadastralNumber: d.cn,
        httpStatus: 200,
        attempts: 1,
        finishedAt,
        requestId: requestIds[i]!,
      };
      const written = await outcomes.record(BATCH, record, {
        ledger: { bank, requestId: requestIds[i]!, resubmit: false, property: d.property },
        job: { key: jobKeyOf(keys, d), data: jobDataOf(d) },
      });
      if (written.kind !== 'written') throw new Error(`database writes (${database.engine}): row ${d.row}'s outcome was ${written.kind}`);
    },
    serverCpu: async () => new Map([...cpuOf(ctx.redis.pid), ...(await database.serverCpu())]),
    async finish() {
      stopFeed();
      const { n } = await db.kysely
        .selectFrom('ledger')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('state', '=', 'submitted')
        .executeTakeFirstOrThrow();
      if (Number(n) !== deals.length)
        throw new Error(`database writes (${database.engine}): ${n} deals submitted in the ledger of ${deals.length}`);
    },
  };
}

/** The Redis-only ledger's writes (REDIS_CLAIM, REDIS_RECORD) through one script batcher. */
function redisWriter(ctx: BenchContext, redis: RedisClient, keys: Keys, deals: BenchDeal[]): Writer {
  const scripts: ScriptRunner = createScriptBatcher(redis);
  const bank = ctx.profile.organization.inn;
  const feed = `{${keys.prefix}}:feed`;
  // Where the Redis-only store kept a batch's outcomes (the key left with them, issue 38).
  const outcomesKey = `{${keys.prefix}}:batch:${BATCH}:outcomes`;
  const entry = (d: BenchDeal): string => `{${keys.prefix}}:ledger:${bank}:${d.dealId}`;
  const finishedMs = Date.now();
  const ready = redis.hset(feed, 'since', String(Date.now()), 'coveredAt', String(Date.now()), 'cursor', 'bench');
  return {
    async claim(i) {
      await ready;
      const d = deals[i]!;
      const [cn, addr] = propertyArgs(d.property);
      const reply = (await scripts(
        REDIS_CLAIM,
        [entry(d), feed, outcomesKey, keys.checkpoints(BATCH), keys.batch(BATCH)],
        [
          BATCH,
          d.row,
          jobKeyOf(keys, d),
          d.dealId,
          bank,
          '',
          30_000,
          TUNABLES.feedLagMs,
          LEDGER_MS,
          d.cn,
          'send',
          `{${keys.prefix}}`,
          randomUUID(),
          cn,
          addr,
          d.personFilter,
        ],
      )) as string[];
      if (reply[0] !== 'send') throw new Error(`database writes (redis): row ${d.row}'s claim was ${reply[0]}, not send`);
    },
    async outcome(i) {
      const d = deals[i]!;
      const [cn, addr] = propertyArgs(d.property);
      // The outcome as the Redis-only store kept it: a positional array (about 100 bytes).
      const outcome = JSON.stringify([d.row, 'queued', d.docflowId, d.cn, 200, 1, finishedMs]);
      const reply = (await scripts(
        REDIS_RECORD,
        [outcomesKey, entry(d), keys.checkpoints(BATCH), jobKeyOf(keys, d), keys.batch(BATCH), keys.rows(BATCH)],
        [
          d.row,
          outcome,
          'submitted',
          d.docflowId,
          'queued',
          new Date(finishedMs).toISOString(),
          'answer',
          jobDataOf(d),
          LEDGER_MS,
          BATCH,
          '',
          '',
          '',
          cn,
          addr,
        ],
      )) as string[];
      if (reply[0] !== 'written') throw new Error(`database writes (redis): row ${d.row}'s outcome was ${reply[0]}`);
    },
    serverCpu: () => Promise.resolve(cpuOf(ctx.redis.pid)),
    async finish() {
      const recorded = await redis.hlen(outcomesKey);
      if (recorded !== deals.length) throw new Error(`database writes (redis): ${recorded} outcomes of ${deals.length}`);
    },
  };
}

/** The Redis-only ledger's shared functions the two scripts below use, as src/ledger/lua.ts had them. */
const REDIS_LEDGER_LUA = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function entry_of(key)
  local flat = redis.call('HGETALL', key)
  local e = {}
  for i = 1, #flat, 2 do e[flat[i]] = flat[i + 1] end
  return e
end
local function extend(key, batch_key, now)
  local exp = tonumber(redis.call('HGET', batch_key, 'expiresAt') or '')
  if not exp then return end
  local ttl = redis.call('PTTL', key)
  if ttl == -1 or (ttl >= 0 and now + ttl < exp) then redis.call('PEXPIREAT', key, exp) end
end
`;

/**
 * The Redis-only claim's path for a deal the ledger does not know (its CLAIM script up to
 * e4269de). KEYS: entry, feed, outcomes, checkpoints, batch hash. ARGV: batch, row, job,
 * dealId, bank, resubmit, timeoutMs, feedLagMs, ledgerMs, cadastral number, mode, key tag,
 * nonce, the property's cadastral number and address digest, the name filter.
 */
const REDIS_CLAIM = luaScript(`${REDIS_LEDGER_LUA}
local now = now_ms()
local earlier = redis.call('HGET', KEYS[3], ARGV[2])
if earlier then return {'done', earlier} end
if ARGV[10] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[10])
  extend(KEYS[4], KEYS[5], now)
end
local since = tonumber(redis.call('HGET', KEYS[2], 'since') or '')
if not since then return {'nofeed'} end
local e = entry_of(KEYS[1])
if e.state then return {'held'} end
redis.call('HSET', KEYS[1], 'n', 0, 'state', 'sending', 'batch', ARGV[1], 'row', ARGV[2], 'job', ARGV[3],
  'tryAt', now, 'timeoutMs', ARGV[7], 'lagMs', ARGV[8], 'nonce', ARGV[13])
if ARGV[14] ~= '' then redis.call('HSET', KEYS[1], 'cn', ARGV[14]) end
if ARGV[15] ~= '' then redis.call('HSET', KEYS[1], 'addr', ARGV[15]) end
if ARGV[16] ~= '' then redis.call('HSET', KEYS[1], 'pf', ARGV[16]) end
redis.call('PEXPIRE', KEYS[1], ARGV[9])
return {'send', ARGV[5] .. ':0:' .. ARGV[4]}`);

/**
 * The Redis-only outcome's path for a docflow the row made (its RECORD script up to e4269de, mode
 * `submitted`). KEYS: outcomes, entry, checkpoints, job, batch hash, row index. ARGV: row, outcome,
 * mode, docflowId, outcome name, at, via, job data, ledgerMs, batch, if absent, resubmit,
 * requestId, the property's cadastral number and address digest.
 */
const REDIS_RECORD = luaScript(`${REDIS_LEDGER_LUA}
local now = now_ms()
if ARGV[11] == '1' and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'exists'} end
local v = redis.call('HMGET', KEYS[2], 'state', 'docflowId', 'batch', 'row', 'prev', 'outcome', 'at', 'via', 'cn', 'addr')
if v[1] == 'submitted' and v[2] ~= ARGV[4] then return {'conflict'} end
if v[3] ~= ARGV[10] or v[4] ~= ARGV[1] then redis.call('HSET', KEYS[2], 'batch', ARGV[10], 'row', ARGV[1]) end
redis.call('HDEL', KEYS[2], 'tryAt', 'endAt', 'timeoutMs', 'lagMs', 'nonce', 'prev', 'job')
redis.call('HSET', KEYS[2], 'state', 'submitted', 'docflowId', ARGV[4], 'outcome', ARGV[5], 'at', ARGV[6])
redis.call('HDEL', KEYS[2], 'via')
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[9]) then redis.call('PEXPIRE', KEYS[2], ARGV[9]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
extend(KEYS[1], KEYS[5], now)
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[6], ARGV[1])
if ARGV[8] ~= '' and redis.call('EXISTS', KEYS[4]) == 1 then redis.call('HSET', KEYS[4], 'data', ARGV[8]) end
return {'written'}`);
