/**
 * The chaos suite, once per engine (SQLite, then PostgreSQL, each on a database of its own):
 * five batches through three worker processes against a gateway that does not deduplicate
 * requestIds (the sandbox's default), loses 5 % of its answers after creating their docflows,
 * shows docflows in its news feed 200 ms late, and answers 501, 5xx and resets. While deals are
 * in flight one worker is SIGKILLed three times, Redis is SIGKILLed once (its AOF brings the work
 * back) and emptied once (FLUSHALL: every job, lock and batch key gone, as a restart without
 * persistence would); then `status` names the rows whose jobs vanished and the command that
 * remakes them, `retry <batch> --missing --profile`, which is run. Two of the batches share 10 %
 * of their deals and are loaded together; the third was run before, expired (the ledger stays)
 * and is loaded again with them; beside them, a batch of lifts and one of extracts of the first
 * batch's deals (the same dealIds, other docflow types). Per deal and type: at most one docflow;
 * every docflow belongs to a row that reports it; every row exactly one outcome, and a row that
 * had one before the FLUSHALL keeps it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Redis } from 'ioredis';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createKeys } from '../../src/redis/keys.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { createRandom } from '../../src/sandbox/faults.js';
import { runCli } from '../helpers/cli.js';
import { ENGINES, openTestDatabase, type TestDatabase } from '../helpers/database.js';
import { csvText } from '../helpers/fixtures.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
import { waitFor, WaitForTimeoutError } from '../helpers/wait-for.js';
import {
  expectDocflowsReported,
  expectOneDocflowPerDeal,
  expectOneOutcomePerRow,
  expectOutcomesKept,
  expectSharedDealsOnce,
  SUBMITTED,
  type LoadSummary,
  type ResultLine,
} from './chaos-checks.js';
import { EXTRACT_HEADER, generateDeals, generateExtracts, generateLifts, LIFT_HEADER } from './generate-deals.js';
import { createRecordProbe, type KeptOutcome, type RecordProbe } from './record-probe.js';
import { createWorkerFleet, tail, type WorkerFleet } from './worker-fleet.js';

/** 1,500 generated rows make the two overlapping batches: left rows 1..830, right rows 741..1500. */
const ALL = 1500;
const A_END = 830;
const B_START = 740;
/** The batch run before, which expires before it is loaded again with the others. */
const C_ROWS = 200;
/** The lifts of the left batch's first deals, and extracts ordered for its first deals: the same dealIds, other types. */
const LIFT_ROWS = 300;
const EXTRACT_ROWS = 150;
/** Objects of the sandbox's registry (samples/registry.json) the extracts are ordered on. */
const EXTRACT_OBJECTS = ['77:06:0005011:2376', '54:35:101234:81', '66:41:0702050:4433', '16:50:011301:3398'];
/** Seeds the sandbox's faults and the moments of the kills. */
const SEED = 8_2026;
/**
 * Added to every gateway call, so that the batches take long enough (tens of seconds)
 * for every kill, the Redis crash and the FLUSHALL to land while deals are in flight.
 */
const LATENCY_MS = 250;
const NEWS_LAG_MS = 200;
const OUTCOMES_DEADLINE_MS = 240_000;
/**
 * Outcomes recorded between two blows: 30 to 150, drawn from the seed. Counted, not timed, so
 * that each blow lands on deals in flight however busy the host, and the fleet has shown it
 * recovered from one before the next; a blow that no progress follows fails the test.
 */
const GAP_MIN = 30;
const GAP_SPREAD = 120;
const GAP_DEADLINE_MS = 120_000;
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
const WORKERS = ['a', 'b', 'c'];
/** A command the test runs: most take a second or two, more on a host the fleet and others keep busy. */
const CLI_MS = 120_000;
const PROFILE = 'samples/bank-profile.json';
const DEAL_ID = 0;

const describeEvent = (e: { what: string; at: number; recorded: number }) => `${e.what} at ${e.at.toFixed(1)} s (${e.recorded} outcomes)`;

describe.each(ENGINES)(
  'chaos on %s: crashes, a Redis restart, a FLUSHALL, a gateway that does not deduplicate, overlapping batches',
  (engine) => {
    const all = generateDeals(ALL);
    const batches = {
      left: all.rows.slice(0, A_END),
      right: all.rows.slice(B_START),
      again: generateDeals(C_ROWS, 200, 'C').rows,
      lifts: generateLifts(all.rows.slice(0, LIFT_ROWS)),
      extracts: generateExtracts(all.rows.slice(0, EXTRACT_ROWS), EXTRACT_OBJECTS),
    };
    type Batch = keyof typeof batches;
    /** A batch of another docflow type than registrations: its `--type` and its file's columns. */
    const TYPED: Partial<Record<Batch, { type: string; header: string[] }>> = {
      lifts: { type: 'lift', header: LIFT_HEADER },
      extracts: { type: 'extract', header: EXTRACT_HEADER },
    };
    const NAMES = Object.keys(batches) as Batch[];
    const rightIds = new Set(batches.right.map((r) => r[DEAL_ID]));
    const shared = new Set(batches.left.map((r) => r[DEAL_ID]!).filter((id) => rightIds.has(id)));
    let dir: string;
    let redis: PrivateRedis | undefined;
    let sandbox: RunningSandbox | undefined;
    let fleet: WorkerFleet | undefined;
    let client: Redis | undefined;
    let database: TestDatabase | undefined;
    let record: RecordProbe;
    let env: Record<string, string>;
    /** Why remaking the rows the FLUSHALL took failed, once it has. */
    let remakeFailure: unknown;
    const keys = createKeys(`chaos-${engine}-${randomBytes(4).toString('hex')}`);

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `realty-chaos-${engine}-`));
      await mkdir(join(dir, 'redis'));
      for (const name of NAMES)
        await writeFile(join(dir, `${name}.csv`), csvText(batches[name], TYPED[name] && { header: TYPED[name].header }));
      database = await openTestDatabase(engine);
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
      const { target } = database;
      env = {
        REDIS_URL: redis.url,
        DATABASE_URL: target.engine === 'sqlite' ? `sqlite:${target.path}` : target.url,
        REALTY_API_URL: sandbox.url,
        REALTY_SESSION_ID: 'demo-session',
        REALTY_PREFIX: keys.prefix,
        LOG_LEVEL: 'warn',
      };
      fleet = createWorkerFleet({ args: WORKER_ARGS, env, logDir: dir });
      // The test's own hands on Redis: they must not hang or throw while it is away.
      client = new Redis(redis.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
      client.on('error', () => undefined);
      record = createRecordProbe(database.db, client, keys);
    });

    afterAll(async () => {
      const steps: Array<() => Promise<unknown>> = [
        async () => fleet?.killAll(),
        async () => client?.disconnect(),
        async () => database?.drop(),
        async () => sandbox?.close(),
        async () => redis?.stop(),
        async () => dir && rm(dir, { recursive: true, force: true }),
      ];
      for (const step of steps) await step().catch((err: unknown) => console.error('chaos cleanup:', err));
    });

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
          PROFILE,
          '--batch',
          name,
          '--rejects',
          join(dir, `${name}.rejects.csv`),
          '--json',
          ...(TYPED[name] ? ['--type', TYPED[name].type] : []),
        ],
        env,
        120_000,
      );
    /** Waits until the database holds `count` outcomes of these batches, failing at once on a crashed worker. */
    const waitForRecorded = async (names: readonly Batch[], count: number, timeoutMs: number, what: string): Promise<void> => {
      const reached = async () => {
        if ((await record.count(names)) >= count) return true;
        noCrash();
        if (remakeFailure !== undefined) throw new Error('remaking the rows the FLUSHALL took failed', { cause: remakeFailure });
        return false;
      };
      await waitFor(reached, { timeoutMs, intervalMs: 100, what });
    };
    const waitForAll = async (names: readonly Batch[], deadlineMs: number): Promise<void> => {
      try {
        await waitForRecorded(names, rowsOf(names), deadlineMs, `an outcome for every row of ${names.join(', ')}`);
      } catch (err) {
        if (!(err instanceof WaitForTimeoutError)) throw err;
        const status = await Promise.all(names.map((n) => runCli(['status', n], env, CLI_MS)));
        const logs = fleet!.logs.map((log) => `${log}:\n${tail(log, 5)}`).join('\n');
        console.error(
          `chaos ${engine}: timed out; status:\n${status.map((s) => s.stdout + s.stderr).join('\n')}\nworker logs end:\n${logs}`,
        );
        throw new Error(`only ${await record.count(names)} of ${rowsOf(names)} rows have an outcome after ${deadlineMs / 1000} s`, {
          cause: err,
        });
      }
    };
    const resultsOf = async (name: Batch): Promise<ResultLine[]> => {
      const file = join(dir, `${name}.results.csv`);
      const result = await runCli(['results', name, '--out', file], env, CLI_MS);
      expect([0, 3], `results ${name}: ${result.stderr}`).toContain(result.code);
      return parse(await readFile(file), { columns: true, bom: true }) as ResultLine[];
    };
    /**
     * After the FLUSHALL: `status` names the batch's rows whose jobs vanished and the one command that
     * remakes them, and that command remakes them. How many rows status found missing, and how long
     * each command took (they run while the fleet works).
     */
    const remakeVanished = async (name: Batch): Promise<{ missing: number; seconds: string }> => {
      const started = Date.now();
      const [json, text] = await Promise.all([runCli(['status', name, '--json'], env, CLI_MS), runCli(['status', name], env, CLI_MS)]);
      expect([0, 3], `status ${name} --json after the FLUSHALL: ${json.stderr}`).toContain(json.code);
      expect([0, 3], `status ${name} after the FLUSHALL: ${text.stderr}`).toContain(text.code);
      const { missing } = JSON.parse(json.stdout) as { missing: number };
      if (missing > 0) expect(text.stdout, `status ${name} names the command`).toContain(`realty-batch retry ${name} --missing --profile`);
      const retried = Date.now();
      const retry = await runCli(['retry', name, '--missing', '--profile', PROFILE], env, CLI_MS);
      expect(retry.code, `retry ${name} --missing --profile: ${retry.stdout}${retry.stderr}`).toBe(0);
      const seconds = (from: number, to: number) => ((to - from) / 1000).toFixed(1);
      return { missing, seconds: `status ${seconds(started, retried)} s, retry ${seconds(retried, Date.now())} s` };
    };

    it(`sends each deal at most once and gives every row one outcome on ${engine}, through kills, a Redis crash, a FLUSHALL, lost answers, overlapping batches, a batch loaded again, and lifts and extracts of the same deals`, async () => {
      const began = Date.now();
      for (const name of WORKERS) fleet!.start(name);

      // The third batch's first life, then it expires (its outcomes, rows and jobs; the ledger stays).
      expect((await load('again')).code).toBe(3);
      await waitForAll(['again'], 120_000);
      const firstLife = await resultsOf('again');
      console.log(`chaos ${engine}: the first life of batch again ended at ${((Date.now() - began) / 1000).toFixed(1)} s`);
      await record.forget(
        'again',
        firstLife.map((l) => l.dealId!),
      );
      const createdBefore = sandbox!.stats().docflowsCreated;

      // The two overlapping batches, the third's second life, and the lifts and extracts of the left's deals, loaded together.
      const loads = await Promise.all(NAMES.map((name) => load(name)));
      for (const loaded of loads) expect([0, 3], loaded.stderr).toContain(loaded.code);
      const summaries = Object.fromEntries(NAMES.map((name, i) => [name, JSON.parse(loads[i]!.stdout) as LoadSummary])) as Record<
        Batch,
        LoadSummary
      >;
      for (const [i, name] of NAMES.entries()) expect(loads[i]!.code, name).toBe(summaries[name].invalid > 0 ? 3 : 0);
      for (const name of NAMES) expect(summaries[name].read).toBe(batches[name].length);
      console.log(`chaos ${engine}: ${NAMES.join(', ')} loaded at ${((Date.now() - began) / 1000).toFixed(1)} s`);

      // The sandbox's own seeded generator: the blows land after the same progress on every run.
      const random = createRandom(SEED);
      const events: Array<{ what: string; at: number; recorded: number }> = [];
      const note = async (what: string) => {
        events.push({ what, at: (Date.now() - began) / 1000, recorded: await record.count(NAMES) });
        // As it happens: a run that fails later shows how far it got.
        console.log(`chaos ${engine}: ${describeEvent(events[events.length - 1]!)}`);
      };
      const progress = async (what: string) => {
        const target = (await record.count(NAMES)) + GAP_MIN + Math.floor(random() * GAP_SPREAD);
        await waitForRecorded(NAMES, target, GAP_DEADLINE_MS, `${target} outcomes ${what}`);
      };
      let kills = 0;
      let redisRestarts = 0;
      let vanished = 0;
      let kept = new Map<string, KeptOutcome>();
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
      // The vanished rows are remade while the blows go on: the last kill lands under the retries.
      let remaking: Promise<void> = Promise.resolve();
      const flushRedis = async () => {
        kept = await record.outcomes(NAMES);
        await note(`FLUSHALL (${kept.size} rows have their outcome)`);
        await client!.flushall();
        remaking = Promise.all(NAMES.map(remakeVanished)).then(async (remade) => {
          vanished = remade.reduce((sum, r) => sum + r.missing, 0);
          const at = ((Date.now() - began) / 1000).toFixed(1);
          const what = remade.map((r, i) => `${NAMES[i]} ${r.missing} (${r.seconds})`).join(', ');
          console.log(`chaos ${engine}: retry --missing --profile remade ${what}; done at ${at} s (${await record.count(NAMES)} outcomes)`);
        });
        // Awaited after the blows; a failure meanwhile stops the waits at once (see waitForRecorded).
        remaking.catch((err: unknown) => {
          remakeFailure = err;
        });
      };
      const blows: Array<[string, () => Promise<void>]> = [
        ['of the new loads', killWorker],
        ['after the first kill', killWorker],
        ['after the second kill', crashRedis],
        ['after the Redis crash', flushRedis],
        ['after the FLUSHALL', killWorker],
      ];
      for (const [after, blow] of blows) {
        await progress(after);
        await blow();
      }
      await remaking;

      await waitForAll(NAMES, OUTCOMES_DEADLINE_MS);
      const seconds = Math.round((Date.now() - began) / 1000);
      noCrash();

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
        `chaos ${engine}: rows ${rowsOf(NAMES)} (${NAMES.map((n) => `${n} ${batches[n].length}`).join(', ')}; ${shared.size} deals shared), outcomes {${Object.entries(
          counts,
        )
          .map(([o, n]) => `${o}: ${n}`)
          .join(', ')}}, ` +
          `docflows ${docflows.length}, requestIds with several docflows ${stats.requestIdsWithSeveralDocflows}, repeated requestIds ${stats.repeatedRequestIds}, lost answers ${stats.faultsInjected.lost ?? 0}, kills ${kills}, redis restarts ${redisRestarts}, rows remade after the FLUSHALL ${vanished}, seconds ${seconds}`,
      );

      // Every blow must have hit the batches in progress, or this test proves little.
      const ahead = events.filter((e) => e.recorded >= rowsOf(NAMES));
      expect(ahead, JSON.stringify(events)).toEqual([]);
      expect(vanished, 'rows whose jobs the FLUSHALL took').toBeGreaterThan(0);
      expect(exits, 'every worker stops cleanly on SIGTERM').toEqual({ a: 0, b: 0, c: 0 });

      for (const name of NAMES) expectOneOutcomePerRow(name, batches[name], lines[name], summaries[name]);
      expectOutcomesKept(kept, lines);
      expectOneDocflowPerDeal(docflows, stats.requestIdsWithSeveralDocflows);
      expectDocflowsReported(docflows, lines);
      expectSharedDealsOnce(shared, lines.left, lines.right);
      // A lift and an extract of a deal are entries of their own: never already_submitted with its registration's docflow.
      for (const name of ['lifts', 'extracts'] as const) {
        expect(
          lines[name].filter((l) => l.outcome === 'already_submitted'),
          name,
        ).toEqual([]);
        expect(lines[name].filter((l) => SUBMITTED.has(l.outcome!)).length, name).toBeGreaterThan(batches[name].length / 2);
      }

      // The batch loaded again after it expired: each row that reached the registry in its first
      // life has that docflow again, decided at load, and none was made for it again.
      const submittedBefore = firstLife.filter((l) => SUBMITTED.has(l.outcome!));
      expect(submittedBefore.length).toBeGreaterThan(C_ROWS / 2);
      expect(
        submittedBefore.map((l) => [l.row, lines.again[Number(l.row) - 1]!.outcome, lines.again[Number(l.row) - 1]!.docflowId]),
      ).toEqual(submittedBefore.map((l) => [l.row, l.outcome, l.docflowId]));
      expect(summaries.again.alreadySubmitted).toBe(submittedBefore.length);
      const madeAgain = docflows.slice(createdBefore).filter((d) => submittedBefore.some((l) => d.requestId?.endsWith(`:0:${l.dealId}`)));
      expect(madeAgain).toEqual([]);
    });
  },
);
