// Writes test/durations.json, the order test files start in on a fresh clone (test/sequencer.ts),
// from a vitest JSON report: `npm run test:durations` runs the suite with one and reads it.
// Usage: node scripts/test-durations.mjs <report.json>
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const reportFile = process.argv[2];
if (!reportFile) {
  console.error('usage: node scripts/test-durations.mjs <vitest JSON report>');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
const durations = Object.fromEntries(
  report.testResults.map((file) => [relative(root, file.name), Math.round(file.endTime - file.startTime)]).sort((a, b) => b[1] - a[1]),
);
writeFileSync(new URL('../test/durations.json', import.meta.url), `${JSON.stringify(durations, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(durations).length} files`);
