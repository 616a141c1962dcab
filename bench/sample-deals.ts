/**
 * The sample rows (samples/deals.csv) the bench's deals and the chaos suite's deals are made
 * from, and what samples/README.md says of them: which fail validation whatever their dealId,
 * and which find their one object through suggest. One list for both, so that a sample row
 * added or changed is seen the same way by each generator.
 *
 * In bench/ because the bench is compiled (tsconfig.build.json: src, jobs, bench, scripts) and
 * runs from dist/bench/, which cannot import test/; the chaos suite runs from the sources and
 * imports it here (test/chaos/generate-deals.ts).
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parse } from 'csv-parse/sync';

// The project's root: two folders up when compiled (dist/bench/), one up from the sources (bench/).
const ROOT = basename(dirname(import.meta.dirname)) === 'dist' ? join(import.meta.dirname, '..', '..') : join(import.meta.dirname, '..');
const SAMPLE = parse(readFileSync(join(ROOT, 'samples/deals.csv')), { relax_column_count: false }) as string[][];

export const HEADER = SAMPLE[0]!;
export const DEAL_ID = HEADER.indexOf('dealId');
export const CADASTRAL = HEADER.indexOf('cadastralNumber');

/** The first occurrence of each sample dealId (a later repeat is refused as a duplicate). */
export const FIRST_ROWS = SAMPLE.slice(1).filter((r, i, rows) => rows.findIndex((o) => o[DEAL_ID] === r[DEAL_ID]) === i);

/** Sample rows that fail validation whatever their dealId (samples/README.md rows 9 and 14): a SNILS checksum; an empty birth place and 31.02. */
export const INVALID_SAMPLES: readonly string[] = ['NSK-2026-000127', 'SPB-2026-010079'];

/** Valid sample rows without a cadastral number that suggest resolves to exactly one object (samples/README.md). */
export const RESOLVING_SAMPLES: ReadonlySet<string> = new Set([
  'NSK-2026-000123',
  'NSK-2026-000124',
  'SPB-2026-010077',
  'MSK-2026-004512',
  'EKB-2026-000311',
  'KZN-2026-000051',
  'MSK-2026-004513',
  'MSK-2026-004514',
  'NSK-2026-000128',
]);
