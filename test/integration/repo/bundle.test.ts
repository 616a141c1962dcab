/**
 * What the command line's bundle (dist/bin, scripts/bundle-cli.mjs) leaves out, since every
 * command compiles the chunks it imports at its start (docs/performance.md): zod's messages in
 * languages other than English (its `z` imported as a namespace, eslint.config.js), and BullMQ's
 * PostgreSQL backend with the `pg` driver it brings (the project's queues are in Redis; its own
 * PostgreSQL driver is loaded from node_modules); and what `run` and `load` of a CSV do not
 * compile at their start: the Excel library and its zip reader, imported when a workbook is
 * read. Read off the built chunks, whose module comments name each package file they hold.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';

const BIN = join(ROOT, 'dist/bin');

/** The package files a chunk holds, by the `// node_modules/...` comment esbuild writes above each. */
const packageFiles = (chunk: string): string[] =>
  [...readFileSync(join(BIN, chunk), 'utf8').matchAll(/^\/\/ (node_modules\/\S+)$/gm)].map((m) => m[1]!);

/** Every package file the chunks hold. */
function bundledFiles(): string[] {
  return readdirSync(BIN)
    .filter((f) => f.endsWith('.js'))
    .flatMap(packageFiles);
}

/** The chunks a command's start reads: its entry and what it imports statically, not what it imports when needed (`import()`). */
function staticClosure(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (chunk: string): void => {
    if (seen.has(chunk)) return;
    seen.add(chunk);
    for (const m of readFileSync(join(BIN, chunk), 'utf8').matchAll(/^(?:import|export)\b[^;()]*?from\s*"\.\/([^"]+\.js)";?$/gm))
      visit(m[1]!);
    for (const m of readFileSync(join(BIN, chunk), 'utf8').matchAll(/^import\s*"\.\/([^"]+\.js)";?$/gm)) visit(m[1]!);
  };
  visit(entry);
  return [...seen];
}

describe('the command line bundle', () => {
  let files: string[];

  beforeAll(() => {
    expect(existsSync(join(BIN, 'realty-batch.js')), 'dist/ is built by npm test (npm run build:all) before the tests').toBe(true);
    files = bundledFiles();
  });

  it('holds zod, with its English messages alone', () => {
    expect(files.some((f) => f.startsWith('node_modules/zod/'))).toBe(true);
    const locales = files.filter((f) => f.startsWith('node_modules/zod/v4/locales/')).map((f) => f.split('/').pop());
    expect(locales).toEqual(['en.js']);
  });

  it("starts `run` and `load` without the Excel library or its zip reader, which only a workbook's reading imports", () => {
    // A command's module is its own chunk, named for it and esbuild's hash (run-NZYACW6D.js; run-batch-… is another module).
    const commandChunk = (name: string) => readdirSync(BIN).find((f) => new RegExp(`^${name}-[A-Z0-9]{8}\\.js$`).test(f))!;
    for (const command of ['run', 'load']) {
      const chunks = [...new Set(['realty-batch.js', commandChunk(command)].flatMap(staticClosure))];
      const held = chunks.flatMap(packageFiles);
      expect(
        held.some((f) => f.startsWith('node_modules/csv-parse/')),
        command,
      ).toBe(true);
      expect(
        held.filter((f) => /^node_modules\/(exceljs|unzipper|jszip|archiver)\//.test(f)),
        command,
      ).toEqual([]);
    }
    expect(bundledFiles().some((f) => f.startsWith('node_modules/unzipper/lib/parse.js'))).toBe(true);
  });

  it('holds BullMQ, without its PostgreSQL backend or the pg driver', () => {
    expect(files.some((f) => f.startsWith('node_modules/bullmq/dist/cjs/classes/worker.js'))).toBe(true);
    expect(files.filter((f) => f.startsWith('node_modules/bullmq/dist/cjs/postgres/'))).toEqual([]);
    expect(files.filter((f) => /^node_modules\/pg(-[a-z]+)?\//.test(f))).toEqual([]);
  });
});
