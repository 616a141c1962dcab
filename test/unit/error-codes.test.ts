/**
 * ERROR_CODES is the one table of the codes an outcome carries: every code the source
 * writes or reads is in it, the processor and the stores write none but its constants,
 * and docs/results.md's "Error codes" section has a row for each.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, failsJob } from '../../src/outcomes/error-codes.js';
import { OUTCOMES } from '../../src/domain/outcome.js';
import { ROOT } from '../helpers/cli.js';

const sources = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
const FILES = [...sources('src'), ...sources('jobs')].map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));
const CODES = new Set<string>(Object.values(ERROR_CODES).map((e) => e.code));
/** The folders that speak outcomes: any `ERR_...` string of theirs is an outcome's code. */
const OUTCOME_FOLDERS = ['jobs/', 'src/worker/', 'src/outcomes/', 'src/batch/', 'src/results/', 'src/ledger/', 'src/feed/'];

/** Each quoted code-like literal on a line that speaks of `errorCode`, or an `ERR_` literal in a folder that speaks outcomes. */
function codeLiterals(): Array<{ where: string; code: string }> {
  const found: Array<{ where: string; code: string }> = [];
  for (const { file, text } of FILES) {
    if (file.endsWith('error-codes.ts')) continue;
    const outcomeFolder = OUTCOME_FOLDERS.some((f) => file.startsWith(f));
    text.split('\n').forEach((line, i) => {
      const pattern = /errorCode|_CODES\b/.test(line)
        ? /['"`]([A-Z][A-Z0-9_]{2,})['"`]/g
        : outcomeFolder
          ? /['"`](ERR_[A-Z0-9_]+)['"`]/g
          : undefined;
      for (const m of pattern ? line.matchAll(pattern) : []) found.push({ where: `${file}:${i + 1}`, code: m[1]! });
    });
  }
  return found;
}

describe('ERROR_CODES', () => {
  it('has an entry for every errorCode literal of src/ and jobs/', () => {
    const literals = codeLiterals();
    // The scan sees what it should: the codes the retry and the ledger's Lua read.
    expect(literals.map((l) => l.code)).toEqual(expect.arrayContaining(['ERR_UNCERTAIN', 'ERR_JOB_STALLED']));
    expect(literals.filter((l) => !CODES.has(l.code))).toEqual([]);
  });

  it('is what the processor, the worker, the loader and the outcomes store write: no errorCode of theirs is a bare string', () => {
    const bare = FILES.filter(
      ({ file }) => /^(jobs|src\/worker|src\/outcomes|src\/batch)\//.test(file) && !file.endsWith('error-codes.ts'),
    ).flatMap(({ file, text }) =>
      text.split('\n').flatMap((line, i) => (/errorCode\s*:\s*['"`]/.test(line) ? [`${relative('.', file)}:${i + 1}`] : [])),
    );
    expect(bare).toEqual([]);
  });

  it('gives every code its outcomes, its meaning and what an operator does, each one sentence', () => {
    for (const [key, entry] of Object.entries(ERROR_CODES)) {
      expect(entry.outcomes.length, key).toBeGreaterThan(0);
      for (const outcome of entry.outcomes) expect(OUTCOMES, key).toContain(outcome);
      expect(entry.meaning, key).toMatch(/^[^\n]{20,}$/);
      expect(entry.action, key).toMatch(/^[^\n]{10,}$/);
    }
  });

  it("has a row in docs/results.md's Error codes section for every code", () => {
    const manual = readFileSync(join(ROOT, 'docs', 'results.md'), 'utf8');
    const start = manual.search(/^## Error codes$/m);
    expect(start, 'docs/results.md has a "## Error codes" section').toBeGreaterThanOrEqual(0);
    const rest = manual.slice(start + 1);
    const next = rest.search(/^## /m);
    const section = next < 0 ? rest : rest.slice(0, next);
    const missing = [...CODES].filter((code) => !section.includes(`| \`${code}\` |`));
    expect(missing).toEqual([]);
  });
});

describe('failsJob: which outcomes fail their job instead of completing it', () => {
  const MACHINERY = ['ERR_INTERNAL', 'ERR_JOB_STALLED', 'ERR_JOB_FAILED', 'ERR_DATA_REMOVED', 'ERR_UNCERTAIN'];

  it('fails the job of a failed row only when our machinery failed it', () => {
    for (const code of MACHINERY) expect(failsJob({ outcome: 'failed', errorCode: code }), code).toBe(true);
    for (const code of ['HTTP_503', 'ECONNRESET', 'UND_ERR_HEADERS_TIMEOUT', 'ERR_API_RESPONSE', 'internalError', undefined])
      expect(failsJob({ outcome: 'failed', errorCode: code }), String(code)).toBe(false);
  });

  it('completes the job of every other outcome, whatever its code', () => {
    for (const outcome of OUTCOMES.filter((o) => o !== 'failed'))
      for (const errorCode of [undefined, ...Object.values(ERROR_CODES).map((e) => e.code)])
        expect(failsJob({ outcome, errorCode }), `${outcome} ${errorCode}`).toBe(false);
  });

  it('names only codes of the table whose entries go with failed rows', () => {
    for (const entry of Object.values(ERROR_CODES))
      if (failsJob({ outcome: 'failed', errorCode: entry.code })) {
        expect(MACHINERY).toContain(entry.code);
        expect(entry.outcomes).toEqual(['failed']);
      }
  });
});
