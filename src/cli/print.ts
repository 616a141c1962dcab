/** The outcome table every command prints the same way. */
import { OUTCOMES, type Outcome } from '../domain/outcome.js';
import type { LoadSummary } from '../batch/load-batch.js';

/** `1 row`, `2 rows`: a count with its noun. */
export function rows(n: number, noun = 'row'): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function printCounts(batch: string, counts: Record<Outcome, number>): void {
  const total = OUTCOMES.reduce((sum, o) => sum + counts[o], 0);
  console.log(`batch ${batch}: ${rows(total)}`);
  const width = Math.max(...OUTCOMES.map((o) => o.length));
  for (const outcome of OUTCOMES) {
    if (counts[outcome] > 0) console.log(`  ${outcome.padEnd(width)}  ${String(counts[outcome]).padStart(7)}`);
  }
}

/** The load summary: rows read, valid, invalid by field, enqueued, already enqueued, already submitted, seconds. */
export function printLoad(s: LoadSummary): void {
  const how = [s.format, s.encoding, s.delimiter === '\t' ? 'tab' : s.delimiter].filter(Boolean).join(', ');
  console.log(
    `loaded ${s.file} (${how}) into batch ${s.batch}: read ${s.read}, valid ${s.valid}, invalid ${s.invalid}, enqueued ${s.enqueued}, already enqueued ${s.alreadyEnqueued}, already submitted ${s.alreadySubmitted} in ${s.seconds} s${s.dryRun ? ' [dry run: nothing enqueued]' : ''}`,
  );
  for (const [field, n] of Object.entries(s.invalidByField).sort((a, b) => b[1] - a[1])) console.log(`  invalid ${field}: ${n}`);
  if (s.rejectsFile) console.log(`  refused rows: ${s.rejectsFile}`);
  if (s.unknownColumns.length > 0) console.log(`  unknown columns (ignored): ${s.unknownColumns.join(', ')}`);
}
