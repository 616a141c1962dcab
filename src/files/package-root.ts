/**
 * This package's own folder (the one with its package.json), wherever it runs from: src/
 * under vitest, dist/src/ when built, or an installed package's folder.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, parse as parsePath } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  const root = parsePath(dir).root;
  while (!existsSync(join(dir, 'package.json'))) {
    if (dir === root) throw new Error("realty-batch's own folder (a directory with package.json) was not found above its code.");
    dir = dirname(dir);
  }
  return dir;
}

/** The version in this package's package.json (`realty-batch --version`). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
