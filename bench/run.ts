/**
 * `npm run bench` (the quick profile) and `npm run bench:full`: every figure of issues 10
 * and 26 in one run, each measured `runs` times (median), its baseline measured alongside
 * on the same machine. Prints progress lines, a table, the total time and the host-speed
 * line; writes bench/results.json (with the profile that made it).
 *
 *   node --expose-gc dist/bench/run.js [--profile quick|full] [--only name,name] [--runs N] [--rows N]
 *
 * `--only` runs some groups and does not write results.json; `--rows` and `--runs` other
 * than the profile's are a quick look, not figures to quote (no results.json either).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadProfile } from '../src/input/profile.js';
import { createLogger } from '../src/logger.js';
import type { BenchContext, InputFile } from './context.js';
import { writeDeals, type FileKind } from './generate.js';
import { enqueueFigures, jsonlFigures, loaderFigures } from './loader.js';
import { elapsed, HOST_LOOP_REFERENCE_MS, hostLoopMs, printTable, progress, round, writeResults, type Figure } from './measure.js';
import { load1mFigure } from './load-1m.js';
import { rateLimitFigures } from './rate-limit.js';
import { openBenchDatabase } from './database.js';
import { startBenchRedis } from './redis.js';
import { memoryFigures } from './redis-memory.js';
import { latencyFigure, overheadFigure } from './workers.js';
import { feedFigure } from './feed.js';
import { reconcileFigure } from './reconcile.js';
import { dbWritesFigures } from './db-writes.js';
import { uploadFigure } from './upload.js';

const ROOT = join(import.meta.dirname, '..', '..');
const GROUPS = [
  'loader',
  'jsonl',
  'enqueue',
  'worker',
  'latency',
  'writes',
  'rate',
  'feed',
  'reconcile',
  'upload',
  'load-1m',
  'memory',
] as const;
/** The groups measured on PostgreSQL too: the bench makes a database of its own on the server for them. */
const ON_POSTGRES: readonly Group[] = ['latency', 'writes'];
/** The table's order: issue 10's. */
const ORDER = [
  'loader-csv-ratio',
  'loader-csv-1251-rows-per-second',
  'loader-jsonl-rows-per-second',
  'enqueue-ratio',
  'worker-overhead-ratio',
  'worker-rate-over-floor',
  'worker-latency-ratio',
  'worker-cpu-per-deal-ratio',
  'worker-cpu-per-deal-over-floor',
  'worker-latency-over-floor-sqlite',
  'worker-latency-over-floor-postgres',
  'db-claim-cpu-ratio-sqlite',
  'db-claim-p99-ratio-sqlite',
  'db-outcome-cpu-ratio-sqlite',
  'db-outcome-p99-ratio-sqlite',
  'db-claim-cpu-ratio-postgres',
  'db-claim-p99-ratio-postgres',
  'db-outcome-cpu-ratio-postgres',
  'db-outcome-p99-ratio-postgres',
  'rate-limit-accuracy',
  'rate-limit-max-one-second',
  'feed-items-over-floor',
  'feed-items-ratio',
  'reconcile-ms-p99',
  'upload-ratio',
  'load-1m-peak-rss-mb',
  'redis-bytes-per-waiting-job',
  'redis-bytes-per-finished-row',
];
type Group = (typeof GROUPS)[number];

/**
 * The two profiles (bench/README.md, "Profiles"): `full` is every figure at the size the
 * issues name; `quick`, the default, fits six minutes on two cores: smaller inputs where the
 * ratio was measured to hold at them, and each group's own quick sizes (its file says which).
 */
/**
 * Rows of the quick profile's `memory` group: a cost per row, once the batch is much larger than
 * what BullMQ keeps whatever the size (its events stream, capped at 10,000 entries, weighs more per
 * row on fewer rows: the figure errs high). 50,000 took a minute of the quick bench's six.
 */
const MEMORY_QUICK_ROWS = 20_000;

/**
 * The quick profile's 30,000 rows (50,000 until the bench outgrew its six minutes): both loader
 * sides stream the file in chunks of 500, so their rates do not depend on the rows once warm;
 * a waiting job's bytes weigh a little more (BullMQ's capped events stream over fewer rows).
 */
const PROFILES = {
  quick: { runs: 3, rows: 30_000 },
  full: { runs: 3, rows: 200_000 },
} as const;
type ProfileName = keyof typeof PROFILES;

const USAGE = `usage: node --expose-gc dist/bench/run.js [--profile quick|full] [--only group,group] [--runs N] [--rows N]
  (npm run bench: the quick profile; npm run bench:full: the full one)
  groups: ${GROUPS.join(', ')}
  --only, --runs and --rows other than the profile's are a quick look: bench/results.json is not written`;

/** A mistyped option: one line and the usage, not a stack trace; exit code 2. */
function usageError(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function parsed(): ReturnType<typeof parseOptions> {
  try {
    return parseOptions();
  } catch (err) {
    return usageError((err as Error).message);
  }
}

/** A whole number of at least 1, or the profile's when the option is not given. */
function count(option: string, value: string | undefined, otherwise: number): number {
  if (value === undefined) return otherwise;
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : usageError(`--${option}: ${value} is not a whole number of at least 1`);
}

function parseOptions() {
  return parseArgs({
    options: {
      profile: { type: 'string', default: 'quick' },
      only: { type: 'string' },
      runs: { type: 'string' },
      rows: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }).values;
}

const args = parsed();
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!(args.profile! in PROFILES)) usageError(`--profile: ${args.profile} is not one of ${Object.keys(PROFILES).join(', ')}`);
const profileName = args.profile as ProfileName;
const profile = PROFILES[profileName];
const only = args.only ? (args.only.split(',') as Group[]) : [...GROUPS];
for (const g of only) if (!GROUPS.includes(g)) usageError(`--only: ${g} is not one of ${GROUPS.join(', ')}`);
const rows = count('rows', args.rows, profile.rows);
const runs = count('runs', args.runs, profile.runs);

async function generate(dir: string, name: string, format: FileKind, count: number, tag: string): Promise<InputFile> {
  const file = join(dir, name);
  const bytes = await writeDeals({ file, rows: count, format, tag });
  progress(`generated ${name}: ${count.toLocaleString('en-US')} rows, ${(bytes / 1e6).toFixed(1)} MB`);
  return { file, rows: count, bytes };
}

async function main(): Promise<void> {
  progress(
    `realty-batch bench, ${profileName} profile: ${only.join(', ')}; ${runs} runs per figure, ${rows.toLocaleString('en-US')} rows; ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const loopAtStart = hostLoopMs();
  progress(
    `host speed: ${loopAtStart} ms for a fixed CPU loop (${HOST_LOOP_REFERENCE_MS} ms on the machine of bench/README at the host's normal speed; more means a slow phase of the host, and every rate below is lower with it)`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'realty-bench-'));
  const redis = await startBenchRedis();
  const database = await openBenchDatabase().catch(async (err: unknown) => {
    await redis.stop();
    throw err;
  });
  const postgres = only.some((g) => ON_POSTGRES.includes(g))
    ? await openBenchDatabase('postgres').catch(async (err: unknown) => {
        await redis.stop();
        await database.close();
        throw err;
      })
    : undefined;
  progress(
    `Redis at ${redis.url}${redis.private ? " (the bench's own redis-server)" : ''}; database ${database.url}${postgres ? ` and ${postgres.db.where}` : ''}; inputs in ${dir}`,
  );
  const figures: Figure[] = [];
  const groupSeconds: Partial<Record<Group, number>> = {};
  try {
    const profileFile = join(ROOT, 'samples/bank-profile.json');
    const ctx: BenchContext = {
      redis,
      database,
      postgres,
      profile: await loadProfile(profileFile),
      profileFile,
      logger: createLogger({ level: 'silent' }),
      dir,
      runs,
      full: profileName === 'full',
      files: {
        csv: only.includes('loader') ? await generate(dir, 'deals-utf8.csv', 'csv-utf8', rows, 'U') : { file: '', rows: 0, bytes: 0 },
        // A quarter of the rows: informational figures, cut to keep the whole bench within ten minutes.
        csv1251: only.includes('loader')
          ? await generate(dir, 'deals-1251.csv', 'csv-1251', rows / 4, 'W')
          : { file: '', rows: 0, bytes: 0 },
        jsonl:
          only.includes('jsonl') || only.includes('enqueue')
            ? await generate(dir, 'deals.jsonl', 'jsonl', rows / 4, 'J')
            : { file: '', rows: 0, bytes: 0 },
      },
    };
    const groups: Record<Group, () => Promise<Figure[]>> = {
      loader: () => loaderFigures(ctx),
      jsonl: () => jsonlFigures(ctx),
      enqueue: () => enqueueFigures(ctx),
      worker: () => overheadFigure(ctx),
      latency: () => latencyFigure(ctx),
      writes: () => dbWritesFigures(ctx),
      rate: () => rateLimitFigures(ctx),
      feed: () => feedFigure(ctx),
      reconcile: () => reconcileFigure(ctx),
      upload: () => uploadFigure(ctx),
      'load-1m': () => load1mFigure(ctx),
      memory: () => memoryFigures(ctx, ctx.full ? rows : Math.min(rows, MEMORY_QUICK_ROWS)),
    };
    for (const group of only) {
      const started = performance.now();
      progress(`-- ${group}`);
      figures.push(...(await groups[group]()));
      groupSeconds[group] = Math.round((performance.now() - started) / 100) / 10;
      progress(`-- ${group} took ${groupSeconds[group]} s`);
    }
  } finally {
    await redis.stop();
    await database.close();
    await postgres?.close();
    await rm(dir, { recursive: true, force: true });
  }
  figures.sort((a, b) => ORDER.indexOf(a.name) - ORDER.indexOf(b.name));
  console.log('');
  printTable(figures);
  for (const f of figures) if (f.note) console.log(`  ${f.name}: ${f.note}`);
  console.log(
    `\ntotal: ${elapsed()} (load average now ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}: other processes on this machine share its cores)`,
  );
  const loopAtEnd = hostLoopMs();
  console.log(`host speed: the fixed CPU loop took ${loopAtStart} ms at the start and ${loopAtEnd} ms at the end`);
  if (only.length === GROUPS.length && rows === profile.rows && runs === profile.runs) {
    const out = join(ROOT, 'bench/results.json');
    await writeResults(out, {
      profile: profileName,
      runs,
      rows,
      finishedAt: new Date().toISOString(),
      totalSeconds: Math.round(performance.now() / 1000),
      groupSeconds,
      host: { cores: cpus().length, loadAverage: loadavg().map((l) => round(l)), hostLoopMs: [loopAtStart, loopAtEnd] },
      figures,
    });
    console.log(`results (${profileName} profile): ${out}`);
  } else console.log('(a partial run: bench/results.json not written)');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
