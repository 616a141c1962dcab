// The expected outcome of every sample row, read from the table in samples/README.md
// (`| row | dealId | outcome | why |`), so the demo and the tests hold the samples to one list.
import { readFileSync } from 'node:fs';

/** @returns {Map<number, {dealId: string, outcome: string}>} */
export function readExpectedOutcomes(readmePath) {
  const expected = new Map();
  for (const line of readFileSync(readmePath, 'utf8').split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // ['', row, dealId, outcome, why, '']
    if (cells.length < 5 || !/^\d+$/.test(cells[1] ?? '')) continue;
    expected.set(Number(cells[1]), { dealId: cells[2].replace(/`/g, ''), outcome: cells[3].replace(/`/g, '') });
  }
  return expected;
}

/** Differences between the expected outcomes and results rows ({row, dealId, outcome}). */
export function compareWithExpected(expected, rows) {
  const problems = [];
  const seen = new Set();
  for (const r of rows) {
    const row = Number(r.row);
    seen.add(row);
    const e = expected.get(row);
    if (!e) problems.push(`row ${row} (${r.dealId}) is not in samples/README.md`);
    else if (e.outcome !== r.outcome || e.dealId !== r.dealId)
      problems.push(`row ${row}: expected ${e.dealId} ${e.outcome}, got ${r.dealId} ${r.outcome}`);
  }
  for (const row of expected.keys()) if (!seen.has(row)) problems.push(`row ${row} has no line in the results`);
  return problems;
}
