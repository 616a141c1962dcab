#!/usr/bin/env node
// `npm run screenshots`: runs the dashboard's browser test, which saves its screenshots in
// artifacts/screenshots/ (gitignored) on every run, and copies the two README shows into
// docs/screenshots/, to be committed: the batches page after a run, and Bull Board's failed
// jobs (two rows whose claim Redis refused, a failure of the machinery).
// Needs what the test needs: Redis at REDIS_URL and chromium (scripts/prepare-tests.mjs).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SAVED = join(root, 'artifacts/screenshots');
const DOCS = join(root, 'docs/screenshots');
const SHOTS = ['batches.png', 'bull-board-failed.png'];

const test = spawnSync('npx', ['vitest', 'run', 'test/integration/dashboard/dashboard-browser.test.ts', '-t', 'finds the failed jobs'], {
  cwd: root,
  stdio: 'inherit',
});
if (test.status !== 0) {
  console.error('The browser test failed: no screenshot was copied.');
  process.exit(test.status ?? 1);
}
mkdirSync(DOCS, { recursive: true });
for (const shot of SHOTS) {
  copyFileSync(join(SAVED, shot), join(DOCS, shot));
  console.log(`docs/screenshots/${shot}`);
}
