/**
 * Figure 6: peak RSS of `realty-batch load` on a 1,000,000-row CSV, measured by
 * GNU time (`%M`, the maximum resident set in KiB) around the real command, into
 * the bench's Redis and database (DATABASE_URL). The input is written under os.tmpdir() and removed after.
 * One run only: a real load of a million rows takes minutes on two cores, and
 * three would break the bench's ten-minute budget.
 */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext } from './context.js';
import { writeDeals } from './generate.js';
import { progress, rawFigure, round, type Figure } from './measure.js';

/** The million rows; the quick profile loads a quarter of it (peak RSS does not grow with the rows: bench/README.md). */
const ROWS_OF = { quick: 250_000, full: 1_000_000 };
const PREFIX = 'bench-load-1m';
const MAIN = join(import.meta.dirname, '..', 'bin', 'realty-batch.js');

interface Timed {
  code: number | null;
  stdout: string;
  stderr: string;
}

function timed(args: string[], env: NodeJS.ProcessEnv): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', 'peak-rss-kib %M', process.execPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-64 * 1024)));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export async function load1mFigure(ctx: BenchContext): Promise<Figure[]> {
  const ROWS = ctx.full ? ROWS_OF.full : ROWS_OF.quick;
  const file = join(ctx.dir, 'deals-1m.csv');
  const bytes = await writeDeals({ file, rows: ROWS, format: 'csv-utf8', tag: 'M' });
  progress(
    `generated deals-1m.csv (the ${ctx.full ? 'full' : 'quick'} profile's size): ${ROWS.toLocaleString('en-US')} rows, ${(bytes / 1e6).toFixed(0)} MB; running realty-batch load under /usr/bin/time`,
  );
  try {
    const started = performance.now();
    const env = { ...process.env, REDIS_URL: ctx.redis.url, DATABASE_URL: ctx.database.url, REALTY_PREFIX: PREFIX, LOG_LEVEL: 'warn' };
    const run = await timed([MAIN, 'load', file, '--profile', ctx.profileFile, '--batch', 'bench-1m', '--json'], env);
    const seconds = (performance.now() - started) / 1000;
    const kib = Number(/peak-rss-kib (\d+)/.exec(run.stderr)?.[1]);
    if (run.code !== 0 || !Number.isFinite(kib)) throw new Error(`realty-batch load exited ${run.code}: ${run.stderr.slice(-2000)}`);
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { enqueued?: number };
    if (summary.enqueued !== ROWS) throw new Error(`realty-batch load enqueued ${summary.enqueued} of ${ROWS} rows`);
    const mb = kib / 1024;
    progress(
      `load of ${ROWS.toLocaleString('en-US')} rows: peak RSS ${mb.toFixed(0)} MB, ${seconds.toFixed(0)} s (${Math.round(ROWS / seconds).toLocaleString('en-US')} rows/s)`,
    );
    const figure = rawFigure(
      'load-1m-peak-rss-mb',
      [mb],
      'MB',
      200,
      'lower',
      `${ROWS} rows (${round(bytes / 1e6)} MB${ctx.full ? '' : ", the quick profile: npm run bench:full loads the issue's 1,000,000"}), one real load (runs: 1, the budget allows no more); GNU time %M of node dist/bin/realty-batch.js load (the bundled command line)`,
    );
    return [{ ...figure, details: { rows: ROWS, seconds: round(seconds), rowsPerSecond: round(ROWS / seconds) } }];
  } finally {
    await rm(file, { force: true });
    await ctx.redis.clear(PREFIX);
    await ctx.database.clear();
  }
}
