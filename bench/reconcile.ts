/**
 * reconcile-ms-p99: how long a row whose answer was lost waits for its outcome. The sandbox
 * drops a share of the creation answers after creating the docflow (`--fault-lost`), and
 * shows every change in its news feed `--news-lag-ms` late; createDealWorker runs as `work`
 * does, following the feed itself, with `--feed-lag-ms` set to the figure's value. For each
 * row whose try failed, the time from that failure (the worker's `failed` event of the try:
 * the dropped answer, noted in the ledger as uncertain) to its outcome written (the
 * `completed` event of the run that wrote it). No baseline: the time is the feed's lag,
 * the follower's poll and the retry's wait, read against `newsLagMs` and `feedLagMs`.
 */
import { createKeys } from '../src/redis/keys.js';
import type { OutcomeRecord } from '../src/domain/outcome.js';
import type { BenchContext } from './context.js';
import { loadDeals, startWorker, untilOutcomes } from './deals.js';
import { median, progress, round, type Figure } from './measure.js';
import { startSandboxProcess } from './sandbox.js';
import { TUNABLES } from '../src/config.js';

/** Deals a run, and the share whose answer the sandbox drops: about 100 lost answers a run in the full profile. */
const DEALS = { quick: 1_000, full: 2_000 };
const LOST = 0.05;
/** The sandbox's `--news-lag-ms`: each docflow shows in the feed this long after its creation. */
const NEWS_LAG_MS = 1_000;
/**
 * The worker's `--feed-lag-ms`: the default (60 s), as a bank runs it. A row the follower
 * finds is woken at once, so the figure is the feed's lag and poll, not this wait; a row
 * sent again only after this wait would show as a p99 of a minute.
 */
const FEED_LAG_MS = TUNABLES.feedLagMs;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One run: ms from each lost answer to its row's outcome. */
async function reconcileRun(ctx: BenchContext, deals: number, tag: string): Promise<{ waits: number[]; outcomes: Record<string, number> }> {
  const sandbox = await startSandboxProcess(0);
  const prefix = `bench-${tag.toLowerCase()}`;
  const keys = createKeys(prefix);
  const redis = await ctx.redis.connect();
  try {
    await sandbox.configure({ faultLost: LOST, newsLagMs: NEWS_LAG_MS });
    await loadDeals(ctx, redis, keys, deals, tag);
    const lostAt = new Map<string, number>();
    const waits: number[] = [];
    const outcomes: Record<string, number> = {};
    const worker = startWorker(ctx, sandbox, redis, keys, { feedLagMs: FEED_LAG_MS });
    worker.worker.on('failed', (job) => {
      if (job?.id !== undefined && !lostAt.has(job.id)) lostAt.set(job.id, performance.now());
    });
    worker.worker.on('completed', (job, record: OutcomeRecord) => {
      outcomes[record.outcome] = (outcomes[record.outcome] ?? 0) + 1;
      const at = job.id === undefined ? undefined : lostAt.get(job.id);
      if (at !== undefined) waits.push(performance.now() - at);
    });
    try {
      await untilOutcomes(ctx, redis, keys, deals, 600_000);
    } finally {
      await worker.close(5000);
    }
    const stats = await sandbox.stats();
    const lost = stats.docflowCalls.lost ?? 0;
    // Every row ends submitted, with one docflow: a lost answer found in the feed, never sent twice.
    if ((outcomes.queued ?? 0) + (outcomes.suspended ?? 0) !== deals || stats.docflowsCreated !== deals || waits.length !== lost)
      throw new Error(
        `${tag}: outcomes ${JSON.stringify(outcomes)}, ${stats.docflowsCreated} docflows for ${deals} deals, ${waits.length} waits for ${lost} lost answers`,
      );
    return { waits, outcomes };
  } finally {
    await redis.quit();
    await ctx.redis.clear(prefix);
    await ctx.database.clear();
    await sandbox.stop();
  }
}

export async function reconcileFigure(ctx: BenchContext): Promise<Figure[]> {
  const deals = ctx.full ? DEALS.full : DEALS.quick;
  const all: number[] = [];
  const p99s: number[] = [];
  const p50s: number[] = [];
  for (let run = 1; run <= ctx.runs; run++) {
    const { waits } = await reconcileRun(ctx, deals, `RC${run}`);
    const sorted = [...waits].sort((a, b) => a - b);
    all.push(...waits);
    p50s.push(percentile(sorted, 50));
    p99s.push(percentile(sorted, 99));
    progress(
      `reconcile run ${run}/${ctx.runs}: ${waits.length} lost answers of ${deals} deals; lost answer → outcome p50 ${Math.round(p50s.at(-1)!)} ms, p99 ${Math.round(p99s.at(-1)!)} ms, max ${Math.round(sorted.at(-1) ?? 0)} ms`,
    );
  }
  const sorted = all.sort((a, b) => a - b);
  return [
    {
      name: 'reconcile-ms-p99',
      value: round(percentile(sorted, 99)),
      unit: 'ms',
      baseline: null,
      target: null,
      better: 'lower',
      runs: ctx.runs,
      samples: p99s.map(round),
      note: `${deals} deals a run, ${LOST * 100} % of creation answers lost after the docflow was made (sandbox --fault-lost), sandbox --news-lag-ms ${NEWS_LAG_MS}, worker --feed-lag-ms ${FEED_LAG_MS}, three tries, backoff 1 s; ms from the failed try to the row's outcome, p99 of every lost answer of every run (samples: each run's p99)`,
      details: {
        newsLagMs: NEWS_LAG_MS,
        feedLagMs: FEED_LAG_MS,
        lostAnswers: sorted.length,
        p50: round(percentile(sorted, 50)),
        p90: round(percentile(sorted, 90)),
        max: round(sorted.at(-1) ?? 0),
        p50PerRun: p50s.map(round),
        medianOfRunP99: round(median(p99s)),
      },
    },
  ];
}
