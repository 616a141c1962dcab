/**
 * Installable like any Node CLI: `npm pack` gives a package that `npm install -g` (into a
 * temporary prefix) turns into a working `realty-batch`. The package is packed from the
 * dist/ that `npm test` has just built (`--ignore-scripts`: a second build here would
 * rewrite dist/ under the other test files that run it).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUGGEST_PATH } from '../../../src/domain/gateway.js';
import { ROOT } from '../../helpers/cli.js';
import { freePort } from '../../helpers/ports.js';

interface Packed {
  filename: string;
  files: Array<{ path: string }>;
}

describe('the npm package', () => {
  let dir: string;
  let packed: Packed;
  let bin: string;

  beforeAll(() => {
    expect(existsSync(join(ROOT, 'dist/bin/realty-batch.js')), 'dist/ is built by npm test (npm run build) before the tests').toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'realty-batch-package-'));
    const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' });
    packed = (JSON.parse(out) as Packed[])[0]!;
    const prefix = join(dir, 'prefix');
    // Its dependencies come from the npm registry (or npm's cache), as for any user. Their install
    // scripts are left out: the one that matters, better-sqlite3's, builds its native module from
    // source where its prebuilt binary cannot be downloaded (here: only the npm registry is reached),
    // about 2.5 minutes of this test on two cores. The module `npm ci` built for this clone, for this
    // very Node, stands in; `npm ci` itself (CI, the clone test) runs the script as a user's install does.
    execFileSync(
      'npm',
      [
        'install',
        '--global',
        '--ignore-scripts',
        '--prefix',
        prefix,
        '--no-audit',
        '--no-fund',
        '--loglevel',
        'error',
        join(dir, packed.filename),
      ],
      { encoding: 'utf8', stdio: 'pipe' },
    );
    const installed = join(prefix, 'lib', 'node_modules', 'realty-batch', 'node_modules', 'better-sqlite3', 'build', 'Release');
    mkdirSync(installed, { recursive: true });
    copyFileSync(
      join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'),
      join(installed, 'better_sqlite3.node'),
    );
    bin = join(prefix, 'bin', 'realty-batch');
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the built CLI, the samples the demo and the sandbox read, and the docs; no sources, tests or bench', () => {
    const paths = packed.files.map((f) => f.path);
    for (const needed of [
      'package.json',
      'README.md',
      // The command line bundled (scripts/bundle-cli.mjs): its entry, the load's reading thread, the Redis scripts.
      'dist/bin/realty-batch.js',
      'dist/bin/read-thread.js',
      'dist/bin/lua/rate-take.lua',
      'samples/deals.csv',
      'samples/bank-profile.json',
      'samples/registry.json',
      'docs/input-format.md',
      // The tested dependency tree: `npm install -g` of the package installs exactly it.
      'npm-shrinkwrap.json',
    ]) {
      expect(paths, needed).toContain(needed);
    }
    const unwanted = paths.filter(
      (p) =>
        /^(src|jobs|test|bench|scripts)\//.test(p) ||
        // tsc's output: the bundle holds what the command line runs of it.
        p.startsWith('dist/src/') ||
        p.startsWith('dist/jobs/') ||
        p.startsWith('dist/bench/') ||
        p.startsWith('dist/test/') ||
        p.endsWith('.map') ||
        p.endsWith('.ts'),
    );
    expect(unwanted).toEqual([]);
  });

  it('installs a realty-batch command that prints its version and its help', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()).toBe(version);
    const help = spawnSync(bin, ['--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    for (const command of ['run', 'load', 'work', 'status', 'results', 'retry', 'schedule', 'dashboard', 'sandbox'])
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });

  it("starts the installed sandbox, which answers with the package's own registry", async () => {
    const port = await freePort();
    const sandbox = spawn(bin, ['sandbox', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let stats: Response | undefined;
      for (let i = 0; i < 100 && !stats; i++) {
        stats = await fetch(`http://127.0.0.1:${port}/__sandbox/stats`).catch(() => undefined);
        if (!stats) await new Promise((r) => setTimeout(r, 100));
      }
      expect(stats?.status).toBe(200);
      const suggest = await fetch(`http://127.0.0.1:${port}${SUGGEST_PATH}`, { method: 'POST' });
      // Any answer of the contract (here: no session) proves the gateway's routes run.
      expect(suggest.status).toBe(401);
      // A signal stops it, saying so in the sandbox's words (it has no jobs to finish).
      let stderr = '';
      sandbox.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => sandbox.once('exit', resolve));
      sandbox.kill('SIGTERM');
      await exited;
      expect(stderr).toContain('realty-batch: SIGTERM received, stopping the sandbox (send it again to exit at once).');
    } finally {
      sandbox.kill('SIGKILL');
    }
  });
});
