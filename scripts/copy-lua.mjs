#!/usr/bin/env node
// The build's second step: tsc compiles the TypeScript, and the Lua scripts the Redis side runs
// (src/**/*.lua, read at run time beside their modules) are copied next to the compiled files.
import { cpSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
cpSync(join(root, 'src'), join(root, 'dist', 'src'), {
  recursive: true,
  filter: (path) => statSync(path).isDirectory() || path.endsWith('.lua'),
});
