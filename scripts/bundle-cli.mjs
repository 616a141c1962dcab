#!/usr/bin/env node
// The build's last step: the command line bundled by esbuild from what tsc compiled, into
// dist/bin/ (`realty-batch.js`, the package's bin; `read-thread.js`, the load's reading thread;
// the chunks they share, each command's own loaded when it runs; the Lua scripts beside them).
//
// Why: Node 20 loads an ES module graph file by file. `realty-batch run` of 24 rows opened 1,081
// JavaScript files, 884 of them in node_modules, and took 1.12 s of CPU; bundled, it opens 143 and
// takes 0.74 (docs/performance.md, "The command line bundled"). The tests start the command line
// hundreds of times, an operator's shell and cron every few minutes.
//
// What stays outside the bundle, loaded from node_modules as before: native addons, and the
// packages that find files of their own beside their code at run time (pino's transport
// worker, the dashboard's server, static files and templates). Every other package's code is
// in the chunks; `__dirname` and `__filename` in it name the chunk's own folder.
import { build, transform } from 'esbuild';
import { cpSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'bin');

/** Packages loaded from node_modules at run time, never bundled (see above). */
const EXTERNAL = [
  // Native addons, and the optional ones their packages look for.
  'better-sqlite3',
  'pg-native',
  'msgpackr-extract',
  'cpu-features',
  // They start a worker thread from a file of their own (pino's transports, thread-stream).
  'pino',
  'pino-*',
  'thread-stream',
  // The dashboard: its server serves files and templates that lie beside the packages' code.
  'fastify',
  '@fastify/*',
  '@bull-board/*',
];

/**
 * BullMQ 6's index also exports its PostgreSQL backend (a queue kept in PostgreSQL instead of
 * Redis), and with it the `pg` driver: about 540 KB of the BullMQ chunk that every command
 * using a queue would compile at its start. The project's queues are in Redis; nothing of it
 * imports that backend (`createPostgresBackend`), and nothing else of BullMQ requires it. The
 * index's re-export is given an empty module instead. The project's own PostgreSQL driver is
 * unaffected: src/db/database.ts loads `pg` from node_modules when DATABASE_URL names PostgreSQL.
 */
const withoutBullmqPostgres = {
  name: 'without-bullmq-postgres',
  setup(b) {
    b.onResolve({ filter: /^\.\/postgres$/ }, (args) =>
      /[\\/]node_modules[\\/]bullmq[\\/]dist[\\/](cjs|esm)[\\/]index\.js$/.test(args.importer)
        ? { path: 'bullmq-postgres-backend', namespace: 'without-bullmq-postgres' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'without-bullmq-postgres' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

rmSync(out, { recursive: true, force: true });
await build({
  plugins: [withoutBullmqPostgres],
  entryPoints: {
    'realty-batch': join(root, 'dist/src/cli/main.js'),
    // src/batch/read-rows.ts starts it beside its own module: in the bundle, beside the chunks.
    'read-thread': join(root, 'dist/src/batch/read-thread.js'),
  },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: '[name]-[hash]',
  external: EXTERNAL,
  // Class and function names as written: error names, log lines and `instanceof` across chunks read the same.
  keepNames: true,
  // CommonJS code in the chunks: `require` of Node's own modules and of the external packages,
  // and its own folder. Defined under names no module uses, so a module's own `__dirname` stays its own.
  banner: {
    js: [
      "import { createRequire as __realtyRequire } from 'node:module';",
      "import { fileURLToPath as __realtyPath } from 'node:url';",
      "import { dirname as __realtyDir } from 'node:path';",
      'const require = __realtyRequire(import.meta.url);',
      'const __realtyFilename = __realtyPath(import.meta.url);',
      'const __realtyDirname = __realtyDir(__realtyFilename);',
    ].join(' '),
  },
  define: { __filename: '__realtyFilename', __dirname: '__realtyDirname' },
  logLevel: 'warning',
});
// The Redis scripts, read at run time from `./lua/` beside the module that runs them (src/redis/lua.ts).
cpSync(join(root, 'dist/src/redis/lua'), join(out, 'lua'), { recursive: true });

// Every file parsed again, as Node will parse it when its command first imports it: a module of a
// package that declared its own top-level `require` beside the banner's would be a SyntaxError in
// a chunk that only a rare command loads, found here at build time rather than by an operator.
for (const file of readdirSync(out).filter((name) => name.endsWith('.js'))) {
  await transform(readFileSync(join(out, file), 'utf8'), { format: 'esm', loader: 'js', logLevel: 'silent' }).catch((err) => {
    throw new Error(`dist/bin/${file} does not parse: ${err.message}`);
  });
}
