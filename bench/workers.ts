/**
 * Figures 3 and 4: deals per second through createDealWorker (suggest, docflow,
 * outcome recorded) against the sandbox in a process of its own, and a bare
 * BullMQ Worker making the same two calls with undici's `request`.
 *
 * Rate = completions between the 10 % and the 90 % mark over the time between
 * them: the steady state a 200,000-row night runs at, without the first fetch
 * and the last stragglers (the end-to-end rate is kept beside it).
 */
import { join } from 'node:path';
import { Queue, Worker, type Job } from 'bullmq';
import { Agent, request } from 'undici';
import { createDealValidator } from '../src/input/validate-deal.js';
import type { Deal } from '../src/domain/deal.js';
import { SUBMITTED_OUTCOMES, type OutcomeRecord } from '../src/domain/outcome.js';
import { createOutcomeStore } from '../src/outcomes/store.js';
import { loadBatch } from '../src/batch/load-batch.js';
import { createKeys } from '../src/redis/keys.js';
import { DEAL_JOB, dealJobId, dealJobOptions, type DealJobData } from '../src/queue/job-data.js';
import { createRealtyClient } from '../src/realty/client.js';
import { DOCFLOW_TYPE, docflowPath, SUGGEST_PATH } from '../src/domain/gateway.js';
import { buildEncumbranceRequest } from '../src/docflows/registration/request.js';
import { createDealWorker } from '../src/worker/create-worker.js';
import { createDealProcessor } from '../jobs/deal.js';
import { resolveCadastralNumber, suggestQuery } from '../src/worker/deal/resolve-cadastral.js';
import { createCommitter } from '../src/db/group-commit.js';
import { REGISTRATION, requestIdOf } from '../src/ledger/entry.js';
import { insertRow, keyString, NO_TRY, type LedgerKey } from '../src/ledger/rows.js';
import type { BenchContext } from './context.js';
import type { BenchDatabase } from './database.js';
import { createDealGenerator, HEADER, writeDeals } from './generate.js';
import { collectGarbage, median, progress, ratioFigure, round, type Figure } from './measure.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox.js';
import { startTrackProcess, type TrackProcess } from './track-process.js';

const CONCURRENCY = 100;
/** Deals of the untimed warm-up run (each side) before the measured runs at 0 ms. */
const WARM_UP_DEALS = { quick: 3_000, full: 4_000 };
/** Deals of the untimed warm-up run (each side) before the measured runs at 50 ms: 2 s at the theoretical rate. */
const LATENCY_WARM_UP_DEALS = { quick: 1_000, full: 2_000 };
/**
 * Deals per run at 0 ms: about eight seconds of the project's worker in the full profile. At
 * 6,000 without a warm-up its first, not yet optimised seconds weighed on the ratio (0.55 to
 * 0.62 here, against 0.72 at 20,000). After the 3,000-deal warm-up, 6,000 leave 4,800 steady
 * deals between the 10 % and 90 % completions: in alternating runs of 6,000, 8,000 and 12,000
 * (2026-11-29) the size moved no side beyond the host's run-to-run spread (10,000, then 8,000,
 * until the bench outgrew its six minutes).
 */
const OVERHEAD_DEALS = { quick: 6_000, full: 20_000 };
/** Deals per run at 50 ms: 6 s at the theoretical 1,000 deals/s (3 s in the quick profile). */
const LATENCY_DEALS = { quick: 3_000, full: 6_000 };
/**
 * Deals per run of PostgreSQL's two sides at 50 ms: the project reaches 100 to 130 deals/s there
 * on two cores (the server shares them with the worker, the sandbox and Redis), so 3,000 took 25 s
 * a run, most of the quick bench's time over six minutes. 1,000 is still 8 s of steady rate.
 */
const POSTGRES_LATENCY_DEALS = { quick: 1_000, full: 3_000 };
const LATENCY_MS = 50;
/**
 * A docflow's life in the worker figures' sandbox: a day, where the sandbox's default is 2 s. A
 * registry moves a docflow on in hours or days. At 2 s each deal's `sent` and `completed` came
 * within the seconds measured, and so did those of the docflows the runs before had made (the
 * bare worker's, the floor's, the project's warm-up and previous run): the project's follower,
 * its database emptied between runs, took them for deals of this bank that the ledger had lost
 * and entered them one by one, 0.75 entries a deal in a 0 ms run (2026-11-29), work no other
 * side did. With a day, the follower follows what a night's run shows it: each docflow's
 * creation. Following the later states is the `feed` group's figure.
 */
const DOCFLOW_LIFE_MS = 86_400_000;

/** The sandbox of the worker figures, in a process of its own, its docflows' life a day (above). */
async function startWorkerSandbox(latencyMs: number): Promise<SandboxProcess> {
  const sandbox = await startSandboxProcess(latencyMs);
  await sandbox.configure({ lifecycleMs: DOCFLOW_LIFE_MS });
  return sandbox;
}

export interface Throughput {
  /** Deals/s between the 10 % and the 90 % completion. */
  steady: number;
  /** Deals/s from the worker's creation to the last completion. */
  endToEnd: number;
  /**
   * µs of this process' CPU (process.cpuUsage(): user + system, every thread, GC included)
   * per deal between the 10 % and the 90 % completion: the worker's own cost, the sandbox and
   * Redis being other processes. Both workers run in this process, measured alike.
   */
  cpuUs: number;
  /** Of which the kernel's (system time): socket writes and reads, mostly. */
  cpuSystemUs: number;
}

/** The completion that opens the steady window (10 %) and the one that closes it (90 %). */
const windowOf = (n: number): { lo: number; hi: number } => ({ lo: Math.floor(n * 0.1), hi: Math.floor(n * 0.9) - 1 });

/** Counts `deals` completions from now: `count` for each, `finished` once all are in. */
function completions(deals: number) {
  const started = performance.now();
  const done: number[] = [];
  const { lo, hi } = windowOf(deals);
  let cpuAtLo = { user: 0, system: 0 };
  let cpuAtHi = { user: 0, system: 0 };
  let wrong = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  return {
    count(ok: boolean): void {
      const i = done.push(performance.now()) - 1;
      if (i === lo) cpuAtLo = process.cpuUsage();
      else if (i === hi) cpuAtHi = process.cpuUsage();
      if (!ok) wrong++;
      if (done.length === deals) finish();
    },
    /** Resolves once every deal is in: the throughput and how many did not succeed. */
    async result(): Promise<{ throughput: Throughput; wrong: number }> {
      await finished;
      const n = done.length;
      return {
        throughput: {
          steady: (hi - lo) / ((done[hi]! - done[lo]!) / 1000),
          endToEnd: n / ((done[n - 1]! - started) / 1000),
          cpuUs: (cpuAtHi.user + cpuAtHi.system - cpuAtLo.user - cpuAtLo.system) / (hi - lo),
          cpuSystemUs: (cpuAtHi.system - cpuAtLo.system) / (hi - lo),
        },
        wrong,
      };
    },
  };
}

/**
 * Loads `deals` suggest-needing rows with loadBatch, then runs createDealWorker until every row has
 * its outcome. With `followerApart`, `realty-batch track` follows the news feed in a process of
 * its own meanwhile, as a deployment on PostgreSQL runs it: the worker's follower leaves it the feed.
 */
export async function projectWorkerRun(
  ctx: BenchContext,
  sandbox: SandboxProcess,
  deals: number,
  tag: string,
  database: BenchDatabase = ctx.database,
  followerApart = false,
): Promise<Throughput> {
  const prefix = `bench-${tag.toLowerCase()}`;
  const keys = createKeys(prefix);
  const file = join(ctx.dir, `${tag}.csv`);
  await writeDeals({ file, rows: deals, format: 'csv-utf8', tag, kind: 'suggest' });
  const redis = await ctx.redis.connect();
  let track: TrackProcess | undefined;
  try {
    const loaded = await loadBatch({
      file,
      batch: 'bench',
      profile: ctx.profile,
      redis,
      keys,
      db: database.db,
      logger: ctx.logger,
      rejects: join(ctx.dir, `${tag}.rejects`),
    });
    if (loaded.enqueued !== deals) throw new Error(`${tag}: ${loaded.enqueued} of ${deals} deals enqueued`);
    if (followerApart) track = await startTrackProcess(ctx, redis, keys, database, sandbox);
    const before = await sandbox.stats();
    collectGarbage();
    const { count, result: completed } = completions(deals);
    const dealWorker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: database.db,
      apiUrl: sandbox.url,
      sessionId: sandbox.sessionId,
      concurrency: CONCURRENCY,
      attempts: 3,
      backoffMs: 1000,
      timeoutMs: 30_000,
      logger: ctx.logger,
    });
    dealWorker.worker.on('completed', (_job, record: OutcomeRecord) =>
      count(SUBMITTED_OUTCOMES.has(record.outcome) && record.outcome !== 'already_submitted'),
    );
    dealWorker.worker.on('failed', () => count(false));
    const { throughput: result, wrong } = await completed();
    await dealWorker.close(5000);
    const after = await sandbox.stats();
    const recorded = await createOutcomeStore(redis, keys, { db: database.db }).count('bench');
    if (
      wrong > 0 ||
      recorded !== deals ||
      after.suggestCalls - before.suggestCalls !== deals ||
      after.docflowsCreated - before.docflowsCreated !== deals
    ) {
      throw new Error(
        `${tag}: ${wrong} deals not submitted, ${recorded} outcomes, ${after.suggestCalls - before.suggestCalls} suggest calls, ${after.docflowsCreated - before.docflowsCreated} docflows for ${deals} deals`,
      );
    }
    return result;
  } finally {
    await track?.stop();
    await redis.quit();
    await ctx.redis.clear(prefix);
    await database.clear();
  }
}

/**
 * The same kind of deals as jobs of a bare queue, with the job options and data the
 * project uses; the request bodies are made before the clock starts, so the bare
 * worker does only what BullMQ and undici must: take the job, two POSTs, parse both answers.
 */
export async function baselineWorkerRun(ctx: BenchContext, sandbox: SandboxProcess, deals: number, tag: string): Promise<Throughput> {
  const bare = await bareJobs(ctx, sandbox, deals, tag);
  return bareWorkerRun(ctx, sandbox, bare, tag, ({ post, suggestUrl, docflowUrl }) => async (job) => {
    const index = job.data.row - 1;
    await post(suggestUrl, bare.suggestBodies[index]!);
    return (await post(docflowUrl, bare.docflowBodies[index]!)).status;
  });
}

/**
 * The floor of the project's guarantees (a detail of the worker figures, docs/performance.md):
 * the bare worker plus what any worker that keeps them must do for a deal, on the same engine
 * as the project's run it is set against. It builds both bodies from the job's deal; before the
 * docflow it claims the deal, one INSERT of its ledger row (the try written ahead, with its
 * cadastral number) unless the deal has one; after it, the deal's row submitted and the row's
 * outcome inserted, one transaction. Both go through the project's group committer
 * (src/db/group-commit.ts: one transaction, one commit a turn) and are committed before the
 * worker goes on. None of the project's other work: no candidates matched (the number comes from
 * the list made before the clock), no feed row read, no lookup of an earlier outcome, no Redis
 * script, no batch or profile read, no masking, metrics, breaker or follower.
 */
export async function floorWorkerRun(
  ctx: BenchContext,
  sandbox: SandboxProcess,
  deals: number,
  tag: string,
  database: BenchDatabase = ctx.database,
): Promise<Throughput> {
  const bare = await bareJobs(ctx, sandbox, deals, tag);
  const commit = createCommitter(database.db);
  const bank = ctx.profile.organization.inn;
  const before = await sandbox.stats();
  try {
    const result = await bareWorkerRun(ctx, sandbox, bare, tag, ({ post, suggestUrl, docflowUrl }) => async (job) => {
      const { row, deal, dealId } = job.data;
      const number = bare.numbers[row - 1]!;
      await post(suggestUrl, JSON.stringify(suggestQuery(deal!)));
      const key: LedgerKey = { bank, type: REGISTRATION, dealId };
      const requestId = requestIdOf(bank, dealId, 0, REGISTRATION);
      // A deal that has a ledger row is not sent again (never, in the bench: each run's database is empty).
      const claimed = await commit(keyString(key), (trx, now) =>
        insertRow(trx, {
          bank,
          type: REGISTRATION,
          deal_id: dealId,
          n: 0,
          state: 'sending',
          batch: FLOOR_BATCH,
          row,
          job: job.id ?? null,
          try_at: now,
          end_at: null,
          timeout_ms: 30_000,
          lag_ms: 0,
          nonce: requestId,
          docflow_id: null,
          outcome: null,
          at: null,
          via: null,
          cn: number,
          addr: null,
          pf: null,
          prev: null,
          updated_at: now,
        }),
      );
      if (!claimed) return 200;
      const created = await post(docflowUrl, JSON.stringify(buildEncumbranceRequest(deal!, number, ctx.profile, sandbox.url)));
      const docflowId = (created.json as { docflowId?: string }).docflowId;
      if (!docflowId) throw new Error(`${tag}: the sandbox answered row ${row}'s docflow without a docflowId`);
      const at = new Date().toISOString();
      await commit(keyString(key), async (trx, now) => {
        await trx
          .updateTable('ledger')
          .set({ state: 'submitted', docflow_id: docflowId, outcome: 'queued', at, ...NO_TRY, job: null, updated_at: now })
          .where('bank', '=', bank)
          .where('type', '=', REGISTRATION)
          .where('deal_id', '=', dealId)
          .execute();
        await trx
          .insertInto('outcomes')
          .values({
            batch: FLOOR_BATCH,
            row,
            deal_id: dealId,
            outcome: 'queued',
            docflow_id: docflowId,
            cn: number,
            http_status: created.status,
            attempts: 1,
            finished_at: at,
            request_id: requestId,
            updated_at: now,
          })
          .execute();
      });
      return created.status;
    });
    const made = (await sandbox.stats()).docflowsCreated - before.docflowsCreated;
    if (made !== deals) throw new Error(`${tag}: the floor made ${made} docflows for ${deals} deals`);
    return result;
  } finally {
    await database.clear();
  }
}

const FLOOR_BATCH = 'bench-floor';

interface BareJobs {
  jobs: Array<{ name: string; data: DealJobData; opts: ReturnType<typeof dealJobOptions> & { jobId: string } }>;
  suggestBodies: string[];
  docflowBodies: string[];
  /** Each row's cadastral number, as suggest answers it. */
  numbers: string[];
}

/** The deals of a bare run as jobs, with their two bodies and cadastral numbers made before the clock starts. */
async function bareJobs(ctx: BenchContext, sandbox: SandboxProcess, deals: number, tag: string): Promise<BareJobs> {
  const generator = createDealGenerator({ tag, kind: 'suggest' });
  const validate = createDealValidator();
  const client = createRealtyClient({ baseUrl: sandbox.url, sessionId: sandbox.sessionId, timeoutMs: 30_000 });
  const cadastral = new Map<string, string>();
  const made: BareJobs = { jobs: [], suggestBodies: [], docflowBodies: [], numbers: [] };
  try {
    for (let i = 0; i < deals; i++) {
      const cells = generator.row(i);
      const result = validate(Object.fromEntries(HEADER.map((h, c) => [h, cells[c] ?? ''])));
      if (!result.ok) throw new Error(`${tag}: generated row ${i + 1} is invalid: ${JSON.stringify(result.problems)}`);
      const deal: Deal = result.deal;
      const query = JSON.stringify(suggestQuery(deal));
      let cn = cadastral.get(query);
      if (cn === undefined) {
        const resolution = await resolveCadastralNumber(deal, client);
        if (resolution.kind !== 'found') throw new Error(`${tag}: suggest did not resolve ${deal.dealId}`);
        cadastral.set(query, (cn = resolution.cadastralNumber));
      }
      made.suggestBodies.push(query);
      made.docflowBodies.push(JSON.stringify(buildEncumbranceRequest(deal, cn, ctx.profile, sandbox.url)));
      made.numbers.push(cn);
      made.jobs.push({
        name: DEAL_JOB,
        data: { batch: 'bench', row: i + 1, dealId: deal.dealId, deal },
        opts: { ...dealJobOptions(), jobId: dealJobId('bench', deal.dealId) },
      });
    }
  } finally {
    await client.close();
  }
  return made;
}

/** What a bare processor is made with: a POST of a JSON body, its answer parsed, and the two calls' addresses. */
interface BareCalls {
  post(url: string, body: string): Promise<{ status: number; json: unknown }>;
  suggestUrl: string;
  docflowUrl: string;
}

/** Enqueues the jobs on a bare queue and runs a bare BullMQ Worker over them with `processor`, made around undici's `request`. */
async function bareWorkerRun(
  ctx: BenchContext,
  sandbox: SandboxProcess,
  bare: BareJobs,
  tag: string,
  processorWith: (calls: BareCalls) => (job: Job<DealJobData, number>) => Promise<number>,
): Promise<Throughput> {
  const deals = bare.jobs.length;
  const prefix = `bench-${tag.toLowerCase()}`;
  const keys = createKeys(prefix);
  const redis = await ctx.redis.connect();
  const queue = new Queue<DealJobData>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
  queue.on('error', () => undefined);
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 30_000 });
  const headers = { 'content-type': 'application/json', accept: 'application/json', authorization: `auth.sid ${sandbox.sessionId}` };
  const calls: BareCalls = {
    async post(url, body) {
      const answer = await request(url, { method: 'POST', headers, body, dispatcher: agent });
      return { status: answer.statusCode, json: await answer.body.json() };
    },
    suggestUrl: `${sandbox.url}${SUGGEST_PATH}`,
    docflowUrl: `${sandbox.url}${docflowPath(DOCFLOW_TYPE)}`,
  };
  try {
    for (let i = 0; i < deals; i += 1000) await queue.addBulk(bare.jobs.slice(i, i + 1000));
    bare.jobs.length = 0;
    collectGarbage();
    const { count, result: completed } = completions(deals);
    const worker = new Worker<DealJobData, number>(keys.queueName, processorWith(calls), {
      connection: redis,
      prefix: keys.bullPrefix,
      concurrency: CONCURRENCY,
    });
    worker.on('error', () => undefined);
    worker.on('completed', (_job, status: number) => count(status === 200 || status === 201));
    worker.on('failed', () => count(false));
    const { throughput: result, wrong } = await completed();
    await worker.close();
    if (wrong > 0) throw new Error(`${tag}: ${wrong} of ${deals} bare jobs did not create a docflow`);
    return result;
  } finally {
    await queue.close();
    await agent.close();
    await redis.quit();
    await ctx.redis.clear(prefix);
  }
}

/**
 * One uncounted run of each side on a figure's new sandbox process. Without it the
 * project's first run would also warm up the sandbox (and BullMQ and undici, in an
 * `--only` run) for the bare run after it: first runs were up to 10 % below the others
 * (at 50 ms, 0.880 against 0.909 and 0.902). With `postgres`, the project and the floor
 * on it too.
 */
async function warmUp(
  ctx: BenchContext,
  sandbox: SandboxProcess,
  deals: number,
  tag: string,
  label: string,
  postgres?: BenchDatabase,
): Promise<void> {
  await projectWorkerRun(ctx, sandbox, deals, `${tag}PW`);
  await baselineWorkerRun(ctx, sandbox, deals, `${tag}BW`);
  await floorWorkerRun(ctx, sandbox, deals, `${tag}FW`);
  if (postgres) {
    await projectWorkerRun(ctx, sandbox, deals, `${tag}QW`, postgres, true);
    await floorWorkerRun(ctx, sandbox, deals, `${tag}GW`, postgres);
  }
  progress(
    `${label} warm-up: ${deals.toLocaleString('en-US')} deals each side (and the floor's${postgres ? ', and both on PostgreSQL' : ''}), not counted`,
  );
}

/** What the floor's writes are, for `details` (floorWorkerRun). */
const FLOOR_WRITES = (engine: string): string =>
  `the floor's writes on ${engine}: before the docflow, the deal's ledger row inserted (INSERT … ON CONFLICT DO NOTHING); after it, the row submitted and the outcome inserted, one transaction; both through the group committer, awaited`;

/**
 * The floor's runs beside the baseline's (floorWorkerRun): its own figures and its ratio to
 * the bare worker by `of` (deals/s, or CPU a deal), median of the paired runs. The floor is
 * what the guarantees cost before any of the project's own work: a target below it cannot be met.
 */
function floorDetails(floor: Throughput[], bare: Throughput[], of: (t: Throughput) => number): Record<string, string | number | number[]> {
  return {
    floorEngine: 'sqlite',
    floorWrites: FLOOR_WRITES('sqlite'),
    floorDealsPerSecond: floor.map((t) => round(t.steady)),
    floorCpuUsPerDeal: floor.map((t) => round(t.cpuUs)),
    floorOverBaseline: round(median(floor.map((t, i) => of(t) / of(bare[i]!)))),
  };
}

const perSecond = (t: Throughput): string =>
  `${Math.round(t.steady).toLocaleString('en-US')} deals/s (end to end ${Math.round(t.endToEnd).toLocaleString('en-US')}), ${Math.round(t.cpuUs)} µs CPU a deal (${Math.round(t.cpuSystemUs)} system)`;

/** worker-overhead-ratio: the project's worker over the bare one, at 0 ms; the floor (on SQLite, the project's engine here) in details. */
export async function overheadFigure(ctx: BenchContext): Promise<Figure[]> {
  const sandbox = await startWorkerSandbox(0);
  const deals = ctx.full ? OVERHEAD_DEALS.full : OVERHEAD_DEALS.quick;
  const project: Throughput[] = [];
  const baseline: Throughput[] = [];
  const floor: Throughput[] = [];
  try {
    await warmUp(ctx, sandbox, ctx.full ? WARM_UP_DEALS.full : WARM_UP_DEALS.quick, 'W', 'worker 0 ms');
    for (let run = 1; run <= ctx.runs; run++) {
      project.push(await projectWorkerRun(ctx, sandbox, deals, `WP${run}`));
      baseline.push(await baselineWorkerRun(ctx, sandbox, deals, `WB${run}`));
      floor.push(await floorWorkerRun(ctx, sandbox, deals, `WF${run}`));
      progress(
        `worker 0 ms run ${run}/${ctx.runs}: createDealWorker ${perSecond(project.at(-1)!)}; bare Worker + undici ${perSecond(baseline.at(-1)!)}; the floor ${perSecond(floor.at(-1)!)}`,
      );
    }
  } finally {
    await sandbox.stop();
  }
  const figure = ratioFigure(
    'worker-overhead-ratio',
    project.map((t) => t.steady),
    baseline.map((t) => t.steady),
    'deals/s',
    0.85,
    `${deals} deals a run, all through suggest, concurrency ${CONCURRENCY}, sandbox (0 ms) in its own process, its docflows kept queued (a day's life, DOCFLOW_LIFE_MS); rates between the 10 % and 90 % completions`,
  );
  const overFloor = ratioFigure(
    'worker-rate-over-floor',
    project.map((t) => t.steady),
    floor.map((t) => t.steady),
    'deals/s',
    0.9,
    `createDealWorker over the floor of its guarantees at 0 ms, ${deals} deals a run, both writing to SQLite (a file under /dev/shm) in the same run; the bare worker's ratio beside it is worker-overhead-ratio`,
  );
  return [
    {
      ...figure,
      details: {
        endToEndMeasured: project.map((t) => round(t.endToEnd)),
        endToEndBaseline: baseline.map((t) => round(t.endToEnd)),
        cpuUsPerDealMeasured: project.map((t) => round(t.cpuUs)),
        cpuUsPerDealBaseline: baseline.map((t) => round(t.cpuUs)),
        cpuSystemUsPerDealMeasured: project.map((t) => round(t.cpuSystemUs)),
        cpuSystemUsPerDealBaseline: baseline.map((t) => round(t.cpuSystemUs)),
        ...floorDetails(floor, baseline, (t) => t.steady),
      },
    },
    {
      ...overFloor,
      details: {
        floorEngine: 'sqlite',
        floorWrites: FLOOR_WRITES('sqlite'),
        bareOverFloor: round(median(baseline.map((t, i) => t.steady / floor[i]!.steady))),
        cpuUsPerDealMeasured: project.map((t) => round(t.cpuUs)),
        cpuUsPerDealFloor: floor.map((t) => round(t.cpuUs)),
      },
    },
  ];
}

/** One engine's runs at 50 ms: the project's worker and the floor, both writing to it. */
interface EngineRuns {
  engine: 'sqlite' | 'postgres';
  database: BenchDatabase;
  project: Throughput[];
  floor: Throughput[];
}

/**
 * worker-latency-ratio: the project's worker (on SQLite) at 50 ms over 100 / (2 × 0.05 s). The
 * bare worker runs after each run too, not in the ratio: what BullMQ and undici alone reach
 * on this machine at that latency, the ceiling a reader compares the figure with.
 * worker-cpu-per-deal-ratio: the CPU a deal of the same runs, the project's over the bare
 * worker's. (CPU a deal moves less than a rate with what else the host runs, but it still moves with the rate reached: fewer jobs a turn share each socket write and timer.)
 * worker-latency-over-floor-<engine>: the project's worker over the floor of its guarantees
 * (floorWorkerRun), both writing to that engine, in the same runs: SQLite, and PostgreSQL when
 * the run has it (ctx.postgres).
 */
/** worker-latency-ratio's target (0.95) is in force when the floor reaches this of theory in the same run (issue 43). */
const LATENCY_TARGET_FLOOR = 0.97;

export async function latencyFigure(ctx: BenchContext): Promise<Figure[]> {
  const sandbox = await startWorkerSandbox(LATENCY_MS);
  const theoretical = CONCURRENCY / (2 * (LATENCY_MS / 1000));
  const deals = ctx.full ? LATENCY_DEALS.full : LATENCY_DEALS.quick;
  const postgresDeals = ctx.full ? POSTGRES_LATENCY_DEALS.full : POSTGRES_LATENCY_DEALS.quick;
  const bare: Throughput[] = [];
  const engines: EngineRuns[] = [
    { engine: 'sqlite', database: ctx.database, project: [], floor: [] },
    ...(ctx.postgres ? [{ engine: 'postgres' as const, database: ctx.postgres, project: [], floor: [] }] : []),
  ];
  const [sqlite] = engines as [EngineRuns];
  try {
    await warmUp(
      ctx,
      sandbox,
      ctx.full ? LATENCY_WARM_UP_DEALS.full : LATENCY_WARM_UP_DEALS.quick,
      'WL',
      `worker ${LATENCY_MS} ms`,
      ctx.postgres,
    );
    for (let run = 1; run <= ctx.runs; run++) {
      sqlite.project.push(await projectWorkerRun(ctx, sandbox, deals, `WL${run}`));
      bare.push(await baselineWorkerRun(ctx, sandbox, deals, `WLB${run}`));
      sqlite.floor.push(await floorWorkerRun(ctx, sandbox, deals, `WLF${run}`));
      for (const e of engines.slice(1)) {
        e.project.push(await projectWorkerRun(ctx, sandbox, postgresDeals, `WLQ${run}`, e.database, true));
        e.floor.push(await floorWorkerRun(ctx, sandbox, postgresDeals, `WLG${run}`, e.database));
      }
      progress(
        `worker ${LATENCY_MS} ms run ${run}/${ctx.runs} (of ${theoretical} theoretical): bare Worker + undici ${perSecond(bare.at(-1)!)}; ${engines
          .map((e) => `${e.engine}: createDealWorker ${perSecond(e.project.at(-1)!)}, the floor ${perSecond(e.floor.at(-1)!)}`)
          .join('; ')}`,
      );
    }
  } finally {
    await sandbox.stop();
  }
  const project = sqlite.project;
  const floor = sqlite.floor;
  const figure = ratioFigure(
    'worker-latency-ratio',
    project.map((t) => t.steady),
    project.map(() => theoretical),
    'deals/s',
    0.95,
    `${deals} deals a run, sandbox latency ${LATENCY_MS} ms per call, concurrency ${CONCURRENCY}, the database SQLite; baseline = ${CONCURRENCY} / (2 × ${LATENCY_MS / 1000} s); the bare worker's own ratio on this machine is in details (bareWorkerRatio), and the floor's on each engine (floorWorkerRatio: bare + what the guarantees cost, floorWorkerRun); the target is in force where the floor reaches \${LATENCY_TARGET_FLOOR} of theory (targetInForce)`,
  );
  const cpu = ratioFigure(
    'worker-cpu-per-deal-ratio',
    project.map((t) => t.cpuUs),
    bare.map((t) => t.cpuUs),
    'µs/deal',
    1.25,
    `this process' CPU (process.cpuUsage(), user + system, GC threads included) per deal between the 10 % and 90 % completions of the ${LATENCY_MS} ms runs: createDealWorker over the bare BullMQ + undici worker, each in this process, the sandbox and Redis in their own; the floor of the guarantees over the bare worker in details (floorOverBaseline), the project over the floor (projectOverFloor)`,
  );
  return [
    {
      ...figure,
      details: {
        endToEndMeasured: project.map((t) => round(t.endToEnd)),
        bareWorker: bare.map((t) => round(t.steady)),
        bareWorkerRatio: round(median(bare.map((t) => t.steady / theoretical))),
        floorWorker: floor.map((t) => round(t.steady)),
        floorWorkerRatio: round(median(floor.map((t) => t.steady / theoretical))),
        // Issue 43: the 0.95 holds where the floor reaches 0.97 of theory or more; below that
        // the host cannot give the project's side what the target asks.
        targetInForce: median(floor.map((t) => t.steady / theoretical)) >= LATENCY_TARGET_FLOOR,
        ...Object.fromEntries(
          engines.slice(1).flatMap((e) => [
            [`${e.engine}Worker`, e.project.map((t) => round(t.steady))],
            [`${e.engine}WorkerRatio`, round(median(e.project.map((t) => t.steady / theoretical)))],
            [`${e.engine}FloorWorkerRatio`, round(median(e.floor.map((t) => t.steady / theoretical)))],
          ]),
        ),
      },
    },
    {
      ...cpu,
      better: 'lower',
      details: {
        cpuSystemUsPerDealMeasured: project.map((t) => round(t.cpuSystemUs)),
        cpuSystemUsPerDealBaseline: bare.map((t) => round(t.cpuSystemUs)),
        ...floorDetails(floor, bare, (t) => t.cpuUs),
      },
    },
    {
      ...ratioFigure(
        'worker-cpu-per-deal-over-floor',
        project.map((t) => t.cpuUs),
        floor.map((t) => t.cpuUs),
        'µs/deal',
        1.15,
        `this process' CPU a deal at ${LATENCY_MS} ms, createDealWorker over the floor of its guarantees, both writing to SQLite (a file under /dev/shm) in the same runs; PostgreSQL's in worker-latency-over-floor-postgres' details (projectCpuOverFloor)`,
      ),
      better: 'lower',
      details: { floorEngine: 'sqlite', floorWrites: FLOOR_WRITES('sqlite') },
    },
    ...engines.map((e) => overFloorFigure(e, e.engine === 'sqlite' ? deals : postgresDeals, theoretical)),
  ];
}

/** The 50 ms worker's rate over the floor on the same engine (SQLite's target 0.95; PostgreSQL's measured and stated). */
function overFloorFigure(e: EngineRuns, deals: number, theoretical: number): Figure {
  const figure = ratioFigure(
    `worker-latency-over-floor-${e.engine}`,
    e.project.map((t) => t.steady),
    e.floor.map((t) => t.steady),
    'deals/s',
    e.engine === 'sqlite' ? 0.95 : null,
    `createDealWorker over the floor of its guarantees at ${LATENCY_MS} ms, ${deals} deals a run, both writing to ${e.engine === 'sqlite' ? 'SQLite (a file under /dev/shm)' : "PostgreSQL (this host's server, the work command's pool of 4); the news feed followed by `realty-batch track` in a process of its own, as docs/deployment.md deploys PostgreSQL (its CPU not in the worker's)"} in the same run`,
  );
  return {
    ...figure,
    details: {
      floorEngine: e.engine,
      floorWrites: FLOOR_WRITES(e.engine),
      projectOverTheory: e.project.map((t) => round(t.steady / theoretical)),
      floorOverTheory: e.floor.map((t) => round(t.steady / theoretical)),
      cpuUsPerDealMeasured: e.project.map((t) => round(t.cpuUs)),
      cpuUsPerDealFloor: e.floor.map((t) => round(t.cpuUs)),
      projectCpuOverFloor: round(median(e.project.map((t, i) => t.cpuUs / e.floor[i]!.cpuUs))),
    },
  };
}
