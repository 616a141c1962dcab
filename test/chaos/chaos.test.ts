/**
 * The chaos suite (issue 8, point 3): 2,000 deals through three worker processes while
 * one worker is SIGKILLed three times, Redis is SIGKILLed once, and the gateway answers
 * 501, 5xx, resets and loses answers. Nothing may be lost and nothing sent twice.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Redis } from 'ioredis';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createKeys } from '../../src/queue/keys.js';
import { startSandbox, type RunningSandbox, type SandboxDocflow } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { csvText } from '../helpers/fixtures.js';
import { generateDeals } from './generate-deals.js';
import { startPrivateRedis, type PrivateRedis } from './private-redis.js';
import { createWorkerFleet, tail, type WorkerFleet } from './worker-fleet.js';
import { createRandom } from '../../src/sandbox/faults.js';

const ROWS = 2000;
/** Seeds the sandbox's faults and the moments of the kills. */
const SEED = 8_2026;
const BATCH = 'chaos';
/**
 * Added to every gateway call, so that 2,000 deals take long enough (tens of seconds)
 * for every kill and the Redis crash to land while deals are in flight.
 */
const LATENCY_MS = 250;
const OUTCOMES_DEADLINE_MS = 200_000;
const WORKER_ARGS = ['--attempts', '8', '--backoff-ms', '50', '--lock-ms', '2000', '--concurrency', '20', '--grace-ms', '5000'];
const SUBMITTED = new Set(['queued', 'suspended']);


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  row: number;
  dealId: string;
  outcome: string;
  docflowId?: string;
}
type ResultLine = Record<string, string>;

describe('chaos: crashes, a Redis restart and a faulty gateway', () => {
  const deals = generateDeals(ROWS);
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
    await writeFile(join(dir, 'deals.csv'), csvText(deals.rows));
    redis = await startPrivateRedis(join(dir, 'redis'));
    sandbox = await startSandbox({ port: 0, fault501: 0.1, fault5xx: 0.1, faultReset: 0.05, faultLost: 0.05, seed: SEED, latencyMs: LATENCY_MS });
    env = { REDIS_URL: redis.url, REALTY_API_URL: sandbox.url, REALTY_SESSION_ID: 'demo-session', REALTY_PREFIX: prefix, LOG_LEVEL: 'warn' };
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

  /** Outcomes recorded so far; undefined while Redis is away. */
  const recorded = async (): Promise<number | undefined> => {
    try {
      return await probe!.hlen(keys.outcomes(BATCH));
    } catch {
      return undefined;
    }
  };

  /** A worker that exited on its own is a finding: fail at once, with its log. */
  const noCrash = (): void => {
    const crashes = fleet!.crashes;
    if (crashes.length === 0) return;
    const report = crashes.map((c) => `worker ${c.name} exited on its own (code ${c.code}, signal ${c.signal}); its log ends:\n${tail(c.log)}`).join('\n\n');
    throw new Error(report);
  };

  it('records exactly one outcome per row and creates at most one docflow per deal, through three worker kills and a Redis crash', async () => {
    const began = Date.now();
    const invalid = deals.invalidRows.length;

    const loaded = await runCli(['load', join(dir, 'deals.csv'), '--profile', 'samples/bank-profile.json', '--batch', BATCH, '--rejects', join(dir, 'rejects.csv'), '--json'], env, 120_000);
    expect(loaded.code, loaded.stderr).toBe(3);
    expect(JSON.parse(loaded.stdout)).toMatchObject({ read: ROWS, valid: ROWS - invalid, invalid, enqueued: ROWS - invalid, alreadyEnqueued: 0 });

    for (const name of ['a', 'b', 'c']) fleet!.start(name);
    // The clock of the chaos starts once the workers record outcomes (a worker needs about 0.5 s to start).
    for (const until = Date.now() + 30_000; ((await recorded()) ?? 0) <= invalid; await sleep(50)) {
      noCrash();
      if (Date.now() > until) throw new Error('the workers recorded no outcome within 30 s');
    }

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

    for (const until = Date.now() + OUTCOMES_DEADLINE_MS; (await recorded()) !== ROWS; await sleep(200)) {
      noCrash();
      if (Date.now() > until) {
        const status = await runCli(['status', BATCH, '--json'], env);
        const logs = fleet!.logs.map((log) => `${log}:\n${tail(log, 5)}`).join('\n');
        console.error(`chaos: timed out; status: ${status.stdout}${status.stderr}\nworker logs end:\n${logs}`);
        throw new Error(`only ${(await recorded()) ?? '?'} of ${ROWS} rows have an outcome after ${OUTCOMES_DEADLINE_MS / 1000} s`);
      }
    }
    const seconds = Math.round((Date.now() - began) / 1000);
    noCrash();
    console.log(`chaos: events ${events.map((e) => `${e.what} at ${e.at.toFixed(1)} s (${e.recorded ?? '?'} outcomes)`).join('; ')}`);

    // A quiet fleet before the sandbox is read: nothing may still be on its way to the gateway.
    const exits = await fleet!.stop('SIGTERM', 15_000);
    const stored = await probe!.hgetall(keys.outcomes(BATCH));
    const outcomes = Object.values(stored).map((v) => JSON.parse(v) as Outcome);
    const resultsFile = join(dir, 'results.csv');
    const results = await runCli(['results', BATCH, '--out', resultsFile], env);
    const lines = results.code === 3 ? (parse(await readFile(resultsFile), { columns: true, bom: true }) as ResultLine[]) : [];
    const docflows = sandbox!.docflows();
    const stats = sandbox!.stats();

    // The figures first, so that a failing run shows them too.
    const counts: Record<string, number> = { queued: 0, suspended: 0, failed: 0, unavailable: 0, invalid: 0 };
    for (const o of outcomes) counts[o.outcome] = (counts[o.outcome] ?? 0) + 1;
    console.log(
      `chaos: rows ${ROWS}, outcomes {${Object.entries(counts).map(([o, n]) => `${o}: ${n}`).join(', ')}}, docflows ${docflows.length}, ` +
        `repeated requestIds ${stats.repeatedRequestIds}, lost answers ${stats.faultsInjected.lost ?? 0}, kills ${kills}, redis restarts ${redisRestarts}, seconds ${seconds}`,
    );

    // Every kill and the Redis crash must have hit a batch in progress, or this test proves little.
    const ahead = events.filter((e) => e.recorded === undefined || e.recorded >= ROWS);
    expect(ahead, JSON.stringify(events)).toEqual([]);
    expect(exits, 'every worker stops cleanly on SIGTERM').toEqual({ a: 0, b: 0, c: 0 });

    // The outcomes hash: rows 1..N, each for the deal of its input row.
    expect(Object.keys(stored).map(Number).sort((x, y) => x - y)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1));
    expect(outcomes.filter((o) => o.dealId !== deals.rows[o.row - 1]![0])).toEqual([]);

    // The results file: one line per row, in input order, none pending.
    expect(results.code, results.stderr).toBe(3);
    expect(lines.map((l) => Number(l.row))).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1));
    expect(lines.filter((l) => l.outcome === 'pending' || l.outcome === '')).toEqual([]);
    expect(lines.filter((l) => l.outcome === 'invalid').map((l) => Number(l.row))).toEqual(deals.invalidRows);

    // No deal has two docflows; every docflow belongs to a row that says so.
    const byDeal = new Map<string, SandboxDocflow[]>();
    for (const d of docflows) byDeal.set(d.requestId ?? '(none)', [...(byDeal.get(d.requestId ?? '(none)') ?? []), d]);
    const twice = [...byDeal].filter(([, list]) => list.length > 1).map(([requestId, list]) => ({ requestId, docflows: list.map((d) => d.docflowId) }));
    expect(twice).toEqual([]);
    const lineOf = new Map(lines.filter((l) => l.outcome !== 'invalid').map((l) => [l.dealId, l]));
    const orphans = docflows
      .map((d) => ({ docflow: d, line: d.requestId === undefined ? undefined : lineOf.get(d.requestId) }))
      .filter(({ docflow, line }) => !line || !SUBMITTED.has(line.outcome!) || line.docflowId !== docflow.docflowId || line.outcome !== docflow.state);
    expect(orphans).toEqual([]);
    // And the other way round: a row that says it reached the registry names a docflow that exists.
    const known = new Set(docflows.map((d) => d.docflowId));
    expect(lines.filter((l) => SUBMITTED.has(l.outcome!) && !known.has(l.docflowId!))).toEqual([]);
  });
});
