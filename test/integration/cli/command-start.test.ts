/**
 * A command line that names its command imports that command's module alone (src/cli/program.ts,
 * COMMANDS): the other commands' modules, and the packages only they use, are not loaded. Read off
 * the built program in a process of its own, by the one package the tool loads through `require`
 * (Kysely, src/db/kysely.ts): a command that opens no database never loads it, the whole program does.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnv, ROOT } from '../../helpers/cli.js';

const PROGRAM = pathToFileURL(join(ROOT, 'dist/src/cli/program.js')).href;

/** Runs the built program's parse of `args` in a new process: its exit code and whether Kysely was loaded. */
async function started(args: string[]): Promise<{ code: number; kysely: boolean }> {
  const script = `
    import { createRequire } from 'node:module';
    import { runProgram } from ${JSON.stringify(PROGRAM)};
    const code = await runProgram(['node', 'realty-batch', ...JSON.parse(process.argv[1])], { output: { writeOut() {}, writeErr() {} } });
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify({ code, kysely: loaded.some((file) => file.includes('/node_modules/kysely/')) }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(args)], {
    cwd: ROOT,
    env: childEnv({}),
  });
  return JSON.parse(stdout) as { code: number; kysely: boolean };
}

describe('a command line imports its own command', () => {
  it('loads no database package for a command that opens none, and every command’s for the program’s own help', async () => {
    expect(await started(['sandbox', '--help'])).toEqual({ code: 0, kysely: false });
    expect(await started(['--env-file', 'no-such.env', 'sandbox', '--help'])).toEqual({ code: 0, kysely: false });
    // The whole program: its help lists every command, some of which open the database.
    expect(await started(['--help'])).toEqual({ code: 0, kysely: true });
    expect(await started(['status', '--help'])).toEqual({ code: 0, kysely: true });
  });
});
