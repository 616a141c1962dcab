/**
 * A command line that names its command imports that command's module alone (src/cli/program.ts,
 * COMMANDS): the other commands' modules, and the packages only they use, are not loaded. Read off
 * the command line as it is installed (the bundle, dist/bin/realty-batch.js, whose chunks keep each
 * command's code apart) in a process of its own, by the SQLite driver (better-sqlite3, a native
 * addon outside the bundle, loaded from node_modules as CommonJS when a chunk that opens the
 * database is imported): a command that opens no database never loads it, the whole program does.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI, childEnv, ROOT } from '../../helpers/cli.js';

/** Said on stderr as the process exits: whether the SQLite driver was loaded. */
const WATCH = `
  import { createRequire } from 'node:module';
  const cache = createRequire(process.argv[1]).cache;
  process.on('exit', () => process.stderr.write('sqlite=' + Object.keys(cache).some((file) => file.includes('/node_modules/better-sqlite3/')) + '\\n'));
`;

/** Runs the built command line with `args` in a new process: its exit code and whether the SQLite driver was loaded. */
async function started(args: string[]): Promise<{ code: number; sqlite: boolean }> {
  const run = promisify(execFile)(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(WATCH)}`, CLI, ...args], {
    cwd: ROOT,
    env: childEnv({}),
  });
  const { stderr } = await run;
  const said = /sqlite=(true|false)/.exec(stderr);
  if (!said) throw new Error(`the watch said nothing: ${stderr}`);
  return { code: run.child.exitCode ?? 0, sqlite: said[1] === 'true' };
}

describe('a command line imports its own command', () => {
  it('loads no database package for a command that opens none, and every command’s for the program’s own help', async () => {
    expect(await started(['sandbox', '--help'])).toEqual({ code: 0, sqlite: false });
    // The program's own option and its value before the command's name (an empty file: Node 20 also reads it).
    const envFile = join(mkdtempSync(join(tmpdir(), 'realty-command-start-')), 'empty.env');
    writeFileSync(envFile, '');
    expect(await started(['--env-file', envFile, 'sandbox', '--help'])).toEqual({ code: 0, sqlite: false });
    rmSync(dirname(envFile), { recursive: true });
    // The whole program: its help lists every command, some of which open the database.
    expect(await started(['--help'])).toEqual({ code: 0, sqlite: true });
    expect(await started(['status', '--help'])).toEqual({ code: 0, sqlite: true });
  });
});
