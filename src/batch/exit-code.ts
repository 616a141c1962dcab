/** The exit codes (docs/results.md, "Exit codes"), from a batch's counts of outcomes. */
import { SUBMITTED_OUTCOMES, type Outcome } from '../domain/outcome.js';
import type { StopReason } from './wait-batch.js';

/** Rows whose outcome needs a person (anything but submitted or still pending). */
export function needsAttention(counts: Record<Outcome, number>): boolean {
  return Object.entries(counts).some(([o, n]) => n > 0 && o !== 'pending' && !SUBMITTED_OUTCOMES.has(o as Outcome));
}

/**
 * docs/results.md, "Exit codes": 0 every row submitted; 3 done but some need attention (a refused row, or a
 * deal with two docflows at the gateway: `duplicates`, DUPLICATE_DOCFLOW); 1 could not finish.
 */
export function exitCodeFor(counts: Record<Outcome, number>, duplicates = 0): 0 | 1 | 3 {
  if (counts.pending > 0) return 1;
  return needsAttention(counts) || duplicates > 0 ? 3 : 0;
}

/**
 * A batch's exit code once its wait ended, for `run` and a nightly tick alike: stopped by the
 * deadline 3 (the night's plan, not a failure: its rows need a person's next step), stopped for
 * anything else 1 (a refused session, a signal, a paused queue, missing rows), else exitCodeFor.
 */
export function batchExitCode(
  stopped: StopReason | undefined,
  results: { counts: Record<Outcome, number>; duplicates: number },
): 0 | 1 | 3 {
  if (stopped === 'deadline') return 3;
  if (stopped) return 1;
  return exitCodeFor(results.counts, results.duplicates);
}
