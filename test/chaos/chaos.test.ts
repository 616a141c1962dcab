/**
 * The chaos suite: three batches through three worker processes against a gateway that
 * does not deduplicate requestIds (the sandbox's default), loses 5 % of its answers after
 * creating their docflows, shows docflows in its news feed 200 ms late, and answers 501,
 * 5xx and resets; one worker is SIGKILLed three times and Redis once. Two of the batches
 * share 10 % of their deals and are loaded together; the third was run before, its keys
 * were deleted (as if it expired) and it is loaded again with them. Per deal: at most one
 * docflow; every docflow belongs to a row that reports it; every row exactly one outcome.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Redis } from 'ioredis';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createKeys } from '../../src/redis/keys.js';
import { openQueue } from '../../src/queue/deal-queue.js';
import { dealJobId } from '../../src/queue/job-data.js';
import { startSandbox, type RunningSandbox, type SandboxDocflow } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { csvText } from '../helpers/fixtures.js';
import { waitFor, WaitForTimeoutError } from '../helpers/wait-for.js';
import { generateDeals } from './generate-deals.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
import { createWorkerFleet, tail, type WorkerFleet } from './worker-fleet.js';
import { createRandom } from '../../src/sandbox/faults.js';

/** 2,000 generated rows make the two overlapping batches: A rows 1..1100, B rows 991..2000. */
const ALL = 2000;
const A_END = 1100;
const B_START = 990;
/** The batch run before, whose keys are deleted before it is loaded again with the others. */
const C_ROWS = 200;
/** Seeds the sandbox's faults and the moments of the kills. */
const SEED = 8_2026;
/**
 * Added to every gateway call, so that the batches take long enough (tens of seconds)
 * for every kill and the Redis crash to land while deals are in flight.
 */
const LATENCY_MS = 250;
const NEWS_LAG_MS = 200;
const OUTCOMES_DEADLINE_MS = 240_000;
/** The feed lag the workers allow is above the sandbox's; a killed worker's calls end after --timeout-ms. */
const WORKER_ARGS = [
  '--attempts',
  '8',
  '--backoff-ms',
  '50',
  '--lock-ms',
  '2000',
  '--concurrency',
  '20',
  '--grace-ms',
  '5000',
  '--timeout-ms',
  '5000',
  '--feed-lag-ms',
  '1000',
];
const SUBMITTED = new Set(['queued', 'suspended']);
const DEAL_ID = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type ResultLine = Record<string, string>;

describe('chaos: crashes, a Redis restart, a faulty gateway that does not deduplicate, overlapping batches', () => {
  const all = generateDeals(ALL);
  const batches = {
    left: all.rows.slice(0, A_END),
    right: all.rows.slice(B_START),
    again: generateDeals(C_ROWS, 200, 'C').rows,
  };
  type Batch = keyof typeof batches;
  const NAMES = Object.keys(batches) as Batch[];
  const shared = new Set(batches.left.map((r) => r[DEAL_ID]).filter((id) => batches.right.some((r) => r[DEAL_ID] === id)));
  let dir: string;
  let redis: PrivateRedis | undefined;
  let sandbox: RunningSandbox | undefined;
  let fleet: WorkerFleet | undefined;
  let probe: Redis | undefined;
  let env: Record<string, string>;
  const prefix = `chaos-${randomBytes(4).toString('hex')}`;
  const keys = createKeys(prefix);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-chaos-'));
    await mkdir(join(dir, 'redis'));
    for (const name of NAMES) await writeFile(join(dir, `${name}.csv`), csvText(batches[name]));
    redis = await startPrivateRedis(join(dir, 'redis'));
    sandbox = await startSandbox({
      port: 0,
      fault501: 0.1,
      fault5xx: 0.1,
      faultReset: 0.05,
      faultLost: 0.05,
      seed: SEED,
      latencyMs: LATENCY_MS,
      newsLagMs: NEWS_LAG_MS,
    });
    env = {
      REDIS_URL: redis.url,
      REALTY_API_URL: sandbox.url,
      REALTY_SESSION_ID: 'demo-session',
      REALTY_PREFIX: prefix,
      LOG_LEVEL: 'warn',
    };
    fleet = createWorkerFleet({ args: WORKER_ARGS, env, logDir: dir });
    // The test's own view of progress: it must not hang or throw while Redis is away.
    probe = new Redis(redis.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    probe.on('error', () => undefined);
  });

  afterAll(async () => {
    const steps: Array<() => Promise<unknown>> = [
      async () => fleet?.killAll(),
      async () => probe?.disconnect(),
      async () => sandbox?.close(),
      async () => redis?.stop(),
      async () => dir && rm(dir, { recursive: true, force: true }),
    ];
    for (const step of steps) await step().catch((err: unknown) => console.error('chaos cleanup:', err));
  });

  /** Outcomes recorded so far in the given batches; undefined while Redis is away. */
  const recorded = async (names: readonly Batch[] = NAMES): Promise<number | undefined> => {
    try {
      let sum = 0;
      for (const name of names) sum += await probe!.hlen(keys.outcomes(name));
      return sum;
    } catch {
      return undefined;
    }
  };
  const rowsOf = (names: readonly Batch[]) => names.reduce((sum, n) => sum + batches[n].length, 0);

  /** A worker that exited on its own is a finding: fail at once, with its log. */
  const noCrash = (): void => {
    const crashes = fleet!.crashes;
    if (crashes.length === 0) return;
    const report = crashes
      .map((c) => `worker ${c.name} exited on its own (code ${c.code}, signal ${c.signal}); its log ends:\n${tail(c.log)}`)
      .join('\n\n');
    throw new Error(report);
  };
  const load = (name: Batch) =>
    runCli(
      [
        'load',
        join(dir, `${name}.csv`),
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        name,
        '--rejects',
        join(dir, `${name}.rejects.csv`),
        '--json',
      ],
      env,
      120_000,
    );
  const waitForAll = async (names: readonly Batch[], deadlineMs: number): Promise<void> => {
    const all = async () => {
      if ((await recorded(names)) === rowsOf(names)) return true;
      noCrash();
      return false;
    };
    try {
      await waitFor(all, { timeoutMs: deadlineMs, intervalMs: 200, what: `an outcome for every row of ${names.join(', ')}` });
    } catch (err) {
      if (!(err instanceof WaitForTimeoutError)) throw err;
      const status = await Promise.all(names.map((n) => runCli(['status', n, '--json'], env)));
      const logs = fleet!.logs.map((log) => `${log}:\n${tail(log, 5)}`).join('\n');
      console.error(`chaos: timed out; status: ${status.map((s) => s.stdout + s.stderr).join('\n')}\nworker logs end:\n${logs}`);
      throw new Error(`only ${(await recorded(names)) ?? '?'} of ${rowsOf(names)} rows have an outcome after ${deadlineMs / 1000} s`, {
        cause: err,
      });
    }
  };
  const resultsOf = async (name: Batch): Promise<ResultLine[]> => {
    const file = join(dir, `${name}.results.csv`);
    const result = await runCli(['results', name, '--out', file], env);
    expect([0, 3], `results ${name}: ${result.stderr}`).toContain(result.code);
    return parse(await readFile(file), { columns: true, bom: true }) as ResultLine[];
  };

  it('sends each deal at most once and gives every row one outcome, through kills, a Redis crash, lost answers, overlapping batches and a batch loaded again', async () => {
    const began = Date.now();
    for (const name of ['a', 'b', 'c']) fleet!.start(name);

    // The third batch's first life, then its keys deleted as if it had expired (the ledger stays).
    expect((await load('again')).code).toBe(3);
    await waitForAll(['again'], 120_000);
    const firstLife = await resultsOf('again');
    const stale = [keys.batch('again'), keys.outcomes('again'), keys.rows('again'), keys.checkpoints('again')];
    await probe!.del(...stale);
    const queue = openQueue(probe!, keys);
    for (const line of firstLife) await queue.remove(dealJobId('again', line.dealId!)).catch(() => 0);
    await queue.close();
    const createdBefore = sandbox!.stats().docflowsCreated;

    // The two overlapping batches and the third's second life, loaded together.
    const loads = await Promise.all(NAMES.map((name) => load(name)));
    for (const loaded of loads) expect(loaded.code, loaded.stderr).toBe(3);
    const summaries = Object.fromEntries(
      NAMES.map((name, i) => [name, JSON.parse(loads[i]!.stdout) as { read: number; invalid: number; alreadySubmitted: number }]),
    );
    for (const name of NAMES) expect(summaries[name]!.read).toBe(batches[name].length);

    // The clock of the chaos starts once the workers record outcomes of the new loads.
    const loadedOutcomes = (await recorded()) ?? 0;
    const recording = async () => {
      if (((await recorded()) ?? 0) > loadedOutcomes + 5) return true;
      noCrash();
      return false;
    };
    await waitFor(recording, { timeoutMs: 30_000, intervalMs: 50, what: 'the workers to record outcomes of the new loads' });

    // The sandbox's own seeded generator: the kills land at the same moments on every run.
    const random = createRandom(SEED);
    const events: Array<{ what: string; at: number; recorded: number | undefined }> = [];
    const pause = () => sleep(500 + Math.floor(random() * 3500));
    const note = async (what: string) => events.push({ what, at: (Date.now() - began) / 1000, recorded: await recorded() });
    let kills = 0;
    let redisRestarts = 0;
    const killWorker = async () => {
      await note(`SIGKILL worker a (${kills + 1})`);
      await fleet!.kill('a');
      kills++;
      fleet!.start('a');
    };
    const crashRedis = async () => {
      await note('SIGKILL redis-server');
      await redis!.kill();
      await redis!.restart();
      redisRestarts++;
      await note('redis-server answers PING again');
    };
    for (const step of [killWorker, killWorker, crashRedis, killWorker]) {
      await pause();
      noCrash();
      await step();
    }

    await waitForAll(NAMES, OUTCOMES_DEADLINE_MS);
    const seconds = Math.round((Date.now() - began) / 1000);
    noCrash();
    console.log(`chaos: events ${events.map((e) => `${e.what} at ${e.at.toFixed(1)} s (${e.recorded ?? '?'} outcomes)`).join('; ')}`);

    // A quiet fleet before the sandbox is read: nothing may still be on its way to the gateway.
    const exits = await fleet!.stop('SIGTERM', 15_000);
    const lines = Object.fromEntries(await Promise.all(NAMES.map(async (name) => [name, await resultsOf(name)] as const))) as Record<
      Batch,
      ResultLine[]
    >;
    const docflows = sandbox!.docflows();
    const stats = sandbox!.stats();

    // The figures first, so that a failing run shows them too.
    const counts: Record<string, number> = {};
    for (const name of NAMES) for (const l of lines[name]) counts[l.outcome!] = (counts[l.outcome!] ?? 0) + 1;
    console.log(
      `chaos: rows ${rowsOf(NAMES)} (${NAMES.map((n) => `${n} ${batches[n].length}`).join(', ')}; ${shared.size} deals shared), outcomes {${Object.entries(
        counts,
      )
        .map(([o, n]) => `${o}: ${n}`)
        .join(', ')}}, ` +
        `docflows ${docflows.length}, requestIds with several docflows ${stats.requestIdsWithSeveralDocflows}, repeated requestIds ${stats.repeatedRequestIds}, lost answers ${stats.faultsInjected.lost ?? 0}, kills ${kills}, redis restarts ${redisRestarts}, seconds ${seconds}`,
    );

    // Every kill and the Redis crash must have hit the batches in progress, or this test proves little.
    const ahead = events.filter((e) => e.recorded === undefined || e.recorded >= rowsOf(NAMES));
    expect(ahead, JSON.stringify(events)).toEqual([]);
    expect(exits, 'every worker stops cleanly on SIGTERM').toEqual({ a: 0, b: 0, c: 0 });

    // Every row exactly one outcome: one line per row, in input order, for the deal of its row, none pending.
    for (const name of NAMES) {
      expect(lines[name].map((l) => Number(l.row))).toEqual(batches[name].map((_, i) => i + 1));
      expect(lines[name].filter((l, i) => l.dealId !== batches[name][i]![DEAL_ID] && l.outcome !== 'invalid')).toEqual([]);
      expect(lines[name].filter((l) => !l.outcome || l.outcome === 'pending')).toEqual([]);
      // The load refuses what it can tell then; a dealId another batch registers meanwhile for another
      // property (left's row 1000 repeats row 1's dealId, and right shares that row) is refused at the claim.
      const invalid = lines[name].filter((l) => l.outcome === 'invalid');
      const atClaim = invalid.filter((l) => l.errorCode === 'DEAL_ID_CONFLICT' && / was registered for /.test(l.errorMessage ?? ''));
      expect(invalid.length - summaries[name]!.invalid).toBeGreaterThanOrEqual(0);
      expect(invalid.length - summaries[name]!.invalid).toBeLessThanOrEqual(atClaim.length);
    }

    // Per deal: at most one docflow, whatever happened.
    const byRequest = new Map<string, SandboxDocflow[]>();
    for (const d of docflows) byRequest.set(d.requestId ?? '(none)', [...(byRequest.get(d.requestId ?? '(none)') ?? []), d]);
    const twice = [...byRequest]
      .filter(([, list]) => list.length > 1)
      .map(([requestId, list]) => ({ requestId, docflows: list.map((d) => d.docflowId) }));
    expect(twice).toEqual([]);
    expect(stats.requestIdsWithSeveralDocflows).toBe(0);

    // Every docflow belongs to a row that reports it (queued or suspended, with its id and state).
    const reporting = new Map<string, ResultLine>();
    for (const name of NAMES) for (const l of lines[name]) if (SUBMITTED.has(l.outcome!)) reporting.set(l.docflowId!, l);
    const orphans = docflows.filter((d) => {
      const line = reporting.get(d.docflowId);
      // The row reports the state the docflow was created in (its life has gone on since).
      const created = d.status === 200 ? 'queued' : 'suspended';
      return !line || line.outcome !== created || !d.requestId?.endsWith(`:0:${line.dealId}`);
    });
    expect(orphans).toEqual([]);
    // And the other way round: every row that names a docflow names one that exists, of its deal.
    const known = new Map(docflows.map((d) => [d.docflowId, d]));
    for (const name of NAMES) {
      const wrong = lines[name].filter(
        (l) =>
          (SUBMITTED.has(l.outcome!) || l.outcome === 'already_submitted') &&
          !known.get(l.docflowId!)?.requestId?.endsWith(`:0:${l.dealId}`),
      );
      expect(wrong, name).toEqual([]);
    }
    // Each shared valid deal: one batch's row made the docflow, the other's says already_submitted with it.
    for (const dealId of shared) {
      const pair = (['left', 'right'] as const).map((n) => lines[n].find((l) => l.dealId === dealId)!);
      if (pair.some((l) => l.outcome === 'invalid')) continue;
      expect(pair.map((l) => (l.outcome === 'already_submitted' ? 'already' : 'made')).sort(), dealId).toEqual(['already', 'made']);
      expect(pair[0]!.docflowId, dealId).toBe(pair[1]!.docflowId);
    }
    // The batch loaded again after its keys were deleted: each row that reached the registry in its
    // first life has that docflow again, decided at load, and none was made for it again.
    const submittedBefore = firstLife.filter((l) => SUBMITTED.has(l.outcome!));
    expect(submittedBefore.length).toBeGreaterThan(C_ROWS / 2);
    expect(submittedBefore.map((l) => [l.row, lines.again[Number(l.row) - 1]!.outcome, lines.again[Number(l.row) - 1]!.docflowId])).toEqual(
      submittedBefore.map((l) => [l.row, l.outcome, l.docflowId]),
    );
    expect(summaries.again!.alreadySubmitted).toBe(submittedBefore.length);
    const madeAgain = docflows.slice(createdBefore).filter((d) => submittedBefore.some((l) => d.requestId?.endsWith(`:0:${l.dealId}`)));
    expect(madeAgain).toEqual([]);
  });
});
