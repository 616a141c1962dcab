/** The outcome table every command prints the same way. */
import { OUTCOMES, type Outcome } from '../outcomes/types.js';

export function printCounts(batch: string, counts: Record<Outcome, number>): void {
  const total = OUTCOMES.reduce((sum, o) => sum + counts[o], 0);
  console.log(`batch ${batch}: ${total} rows`);
  const width = Math.max(...OUTCOMES.map((o) => o.length));
  for (const outcome of OUTCOMES) {
    if (counts[outcome] > 0) console.log(`  ${outcome.padEnd(width)}  ${String(counts[outcome]).padStart(7)}`);
  }
}
