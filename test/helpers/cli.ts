/** Runs the built command line (`npm test` builds first) as a user would. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = fileURLToPath(new URL('../../dist/bin/realty-batch.js', import.meta.url));

/**
 * The environment a CLI child starts with: the test process's, without what a caller's shell may
 * have set for a deployment (REALTY_*, REDIS_URL, LOG_LEVEL, DATABASE_URL) or its locale (LANG, LC_ALL,
 * LC_MESSAGES: the files' language), then what the test gives.
 * A developer who exported REALTY_PREFIX for the demo would otherwise run every child against it,
 * and an `--env-file` could not say where to look. The test machinery's own REALTY_TEST_* stay.
 * DATABASE_URL is empty rather than unset unless the test gives one, so that a `.env` in the
 * working folder cannot give one either (test/helpers/database.ts).
 */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const inherited: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^REALTY_(?!TEST_)/.test(name) || name === 'REDIS_URL' || name === 'LOG_LEVEL' || name === 'DATABASE_URL') continue;
    // The locale picks the language of the files for a person (--lang's default): a Russian shell would change them.
    if (name === 'LANG' || name === 'LC_ALL' || name === 'LC_MESSAGES') continue;
    inherited[name] = value;
  }
  return { ...inherited, DATABASE_URL: '', ...env };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`realty-batch ${args[0]} did not finish in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    // 'close', not 'exit': a child's last output can still be in its pipes when it has exited
    // (a busy host reads it later), and a test would see the output cut short.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs the built command line on a pseudo-terminal, as an operator at a terminal would
 * (util-linux `script`): stdout and stderr are the terminal, captured together in `output`.
 */
export function runCliOnTerminal(
  args: string[],
  env: Record<string, string | undefined>,
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; output: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, CLI, ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: options.cwd ?? ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`realty-batch ${args[0]} on a terminal did not finish in ${options.timeoutMs ?? 60_000} ms\n${output}`));
    }, options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
