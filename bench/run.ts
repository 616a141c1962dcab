/**
 * `npm run bench`: every figure of issue 10 in one run, each measured `runs`
 * times (median), its baseline measured alongside on the same machine. Prints
 * progress lines, a table and the total time; writes bench/results.json.
 *
 *   node --expose-gc dist/bench/run.js [--only name,name] [--runs N] [--rows N]
 *
 * `--only` runs some groups (loader, jsonl, enqueue, worker, latency, rate, load-1m) and
 * does not write results.json; `--rows` shrinks the 200,000-row inputs (a
 * quick look, not a figure to quote).
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
import { elapsed, HOST_LOOP_REFERENCE_MS, hostLoopMs, printTable, progress, writeResults, type Figure } from './measure.js';
import { load1mFigure } from './load-1m.js';
import { rateLimitFigures } from './rate-limit.js';
import { startBenchRedis } from './redis.js';
import { latencyFigure, overheadFigure } from './workers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const GROUPS = ['loader', 'jsonl', 'enqueue', 'worker', 'latency', 'rate', 'load-1m'] as const;
/** The table's order: issue 10's. */
const ORDER = [
  'loader-csv-ratio',
  'loader-csv-1251-rows-per-second',
  'loader-jsonl-rows-per-second',
  'enqueue-ratio',
  'worker-overhead-ratio',
  'worker-latency-ratio',
  'worker-cpu-per-deal-ratio',
  'rate-limit-accuracy',
  'rate-limit-max-one-second',
  'load-1m-peak-rss-mb',
  'redis-bytes-per-waiting-job',
];
type Group = (typeof GROUPS)[number];

const { values: args } = parseArgs({
  options: { only: { type: 'string' }, runs: { type: 'string', default: '3' }, rows: { type: 'string', default: '200000' } },
});
const only = args.only ? (args.only.split(',') as Group[]) : [...GROUPS];
for (const g of only) if (!GROUPS.includes(g)) throw new Error(`--only: ${g} is not one of ${GROUPS.join(', ')}`);
const rows = Number(args.rows);

async function generate(dir: string, name: string, format: FileKind, count: number, tag: string): Promise<InputFile> {
  const file = join(dir, name);
  const bytes = await writeDeals({ file, rows: count, format, tag });
  progress(`generated ${name}: ${count.toLocaleString('en-US')} rows, ${(bytes / 1e6).toFixed(1)} MB`);
  return { file, rows: count, bytes };
}

async function main(): Promise<void> {
  progress(
    `realty-batch bench: ${only.join(', ')}; ${args.runs} runs per figure; ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const loopAtStart = hostLoopMs();
  progress(
    `host speed: ${loopAtStart} ms for a fixed CPU loop (${HOST_LOOP_REFERENCE_MS} ms on the machine of bench/README at the host's normal speed; more means a slow phase of the host, and every rate below is lower with it)`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'realty-bench-'));
  const redis = await startBenchRedis();
  progress(`Redis at ${redis.url}${redis.private ? " (the bench's own redis-server)" : ''}; inputs in ${dir}`);
  const figures: Figure[] = [];
  try {
    const profileFile = join(ROOT, 'samples/bank-profile.json');
    const ctx: BenchContext = {
      redis,
      profile: await loadProfile(profileFile),
      profileFile,
      logger: createLogger({ level: 'silent' }),
      dir,
      runs: Number(args.runs),
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
      rate: () => rateLimitFigures(ctx),
      'load-1m': () => load1mFigure(ctx),
    };
    for (const group of only) {
      progress(`-- ${group}`);
      figures.push(...(await groups[group]()));
    }
  } finally {
    await redis.stop();
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
  console.log(`host speed: the fixed CPU loop took ${loopAtStart} ms at the start and ${hostLoopMs()} ms at the end`);
  if (only.length === GROUPS.length && rows === 200_000) {
    const out = join(ROOT, 'bench/results.json');
    await writeResults(out, figures);
    console.log(`results: ${out}`);
  } else console.log('(a partial run: bench/results.json not written)');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
