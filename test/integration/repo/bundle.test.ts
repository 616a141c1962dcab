/**
 * What the command line's bundle (dist/bin, scripts/bundle-cli.mjs) leaves out, since every
 * command compiles the chunks it imports at its start (docs/performance.md): zod's messages in
 * languages other than English (its `z` imported as a namespace, eslint.config.js), and BullMQ's
 * PostgreSQL backend with the `pg` driver it brings (the project's queues are in Redis; its own
 * PostgreSQL driver is loaded from node_modules). Read off the built chunks, whose module
 * comments name each package file they hold.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';

const BIN = join(ROOT, 'dist/bin');

/** Every package file the chunks hold, by the `// node_modules/...` comment esbuild writes above each. */
function bundledFiles(): string[] {
  const files: string[] = [];
  for (const name of readdirSync(BIN).filter((f) => f.endsWith('.js'))) {
    for (const m of readFileSync(join(BIN, name), 'utf8').matchAll(/^\/\/ (node_modules\/\S+)$/gm)) files.push(m[1]!);
  }
  return files;
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

  it('holds BullMQ, without its PostgreSQL backend or the pg driver', () => {
    expect(files.some((f) => f.startsWith('node_modules/bullmq/dist/cjs/classes/worker.js'))).toBe(true);
    expect(files.filter((f) => f.startsWith('node_modules/bullmq/dist/cjs/postgres/'))).toEqual([]);
    expect(files.filter((f) => /^node_modules\/pg(-[a-z]+)?\//.test(f))).toEqual([]);
  });
});
