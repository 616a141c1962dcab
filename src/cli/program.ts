/**
 * The `realty-batch` program: every command registered, and how a parse ends in an exit
 * code. main.ts parses process.argv with it; tests parse arrays in-process.
 *
 * A command's module defines its flags and imports the heavy parts only it uses (the
 * gateway's client and undici, the workers, the dashboard's server) when its action runs:
 * every command starts with every command's flags, not with every command's code, and a
 * load's memory is the load's own.
 */
import { existsSync } from 'node:fs';
import { Command, CommanderError, type OutputConfiguration } from 'commander';
import { UsageError } from '../errors.js';
import { packageVersion } from '../files/package-root.js';
import { environment, type CliContext, type Env } from './environment.js';
import { reportError } from './report-error.js';
import { registerActionCommand } from './commands/action.js';
import { registerAnswerCommand } from './commands/answer.js';
import { registerDashboardCommand } from './commands/dashboard.js';
import { registerDbCommand } from './commands/db.js';
import { registerLedgerCommand } from './commands/ledger.js';
import { registerLedgerImportCommand } from './commands/ledger-import.js';
import { registerLoadCommand } from './commands/load.js';
import { registerDocumentsCommand } from './commands/documents.js';
import { registerPaymentsCommand } from './commands/payments.js';
import { registerResultsCommand } from './commands/results.js';
import { registerRetryCommand } from './commands/retry.js';
import { registerRunCommand } from './commands/run.js';
import { registerSignCommand } from './commands/sign.js';
import { registerToSignCommand } from './commands/to-sign.js';
import { registerSandboxCommand } from './commands/sandbox.js';
import { registerScheduleCommand } from './commands/schedule.js';
import { registerStatusCommand } from './commands/status.js';
import { registerTrackCommand } from './commands/track.js';
import { registerWorkCommand } from './commands/work.js';

export interface ProgramOptions {
  /** The environment a command runs with; read from process.env (and .env) unless a test gives one. */
  environment?: () => Env;
  /** Where commander writes help and its own errors; stdout and stderr unless a test gives other. */
  output?: OutputConfiguration;
}

/** The program, its commands in the order `--help` lists them. Commander never exits the process: it throws. */
export function buildProgram(context: CliContext, output?: OutputConfiguration): Command {
  const program = new Command('realty-batch')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option(
      '--env-file <file>',
      'read the environment (REDIS_URL, REALTY_PREFIX, ...) from this file first; the real environment wins, then this file, then .env here',
    )
    // Before any command reads the environment: a command run from another folder finds its deployment.
    .hook('preAction', (program) => loadEnvFile(program.opts<{ envFile?: string }>().envFile))
    .description('Submit mortgage registrations (encumbrance_request docflows) in bulk, on BullMQ and Redis.')
    .showHelpAfterError('(add --help for the usage)')
    // The options after a subcommand are the subcommand's: `schedule add --inbox` is add's
    // --inbox, not the one of `schedule --inbox` (its first form).
    .enablePositionalOptions()
    .exitOverride();
  // Set before the commands are made: each one copies these settings.
  if (output) program.configureOutput(output);
  registerRunCommand(program, context);
  registerLoadCommand(program, context);
  registerWorkCommand(program, context);
  registerResultsCommand(program, context);
  registerPaymentsCommand(program, context);
  registerToSignCommand(program, context);
  registerSignCommand(program, context);
  registerDocumentsCommand(program, context);
  registerAnswerCommand(program, context);
  for (const action of ['cancel', 'suspend', 'resume'] as const) registerActionCommand(program, context, action);
  registerRetryCommand(program, context);
  registerStatusCommand(program, context);
  registerTrackCommand(program, context);
  registerLedgerImportCommand(registerLedgerCommand(program, context), context);
  registerScheduleCommand(program, context);
  registerDashboardCommand(program, context);
  registerDbCommand(program, context);
  registerSandboxCommand(program);
  return program;
}

/**
 * Parses `argv` (node's: the executable and the script first) and runs its command: the
 * exit code. Help is 0; commander's own errors (unknown option or command, a flag's bad
 * value, a missing argument) 2; the project's errors their own code (src/errors.ts);
 * anything else 1, in one sentence on stderr.
 */
export async function runProgram(argv: readonly string[], options: ProgramOptions = {}): Promise<number> {
  let exitCode = 0;
  // The command being run (`schedule-run`), set before its action: it names a terminal's log file.
  let command: string | undefined;
  const context: CliContext = {
    environment: options.environment ?? (() => environment(command)),
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  try {
    await buildProgram(context, options.output)
      .hook('preAction', (_program, action) => {
        command = commandPath(action);
      })
      .parseAsync(argv);
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0 ? 0 : 2;
    }
    return reportError(err);
  }
}

/** `--env-file`: its variables join the environment before the config reads it (set ones are kept). */
function loadEnvFile(file: string | undefined): void {
  if (file === undefined) return;
  if (!existsSync(file)) throw new UsageError(`--env-file ${file}: there is no such file.`);
  process.loadEnvFile(file);
}

/** `schedule run` as `schedule-run`: the command's names below the program's. */
function commandPath(action: Command): string {
  const names: string[] = [];
  for (let c: Command | null = action; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join('-');
}
