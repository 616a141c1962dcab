/**
 * The `realty-batch` program: every command registered, and how a parse ends in an exit
 * code. main.ts parses process.argv with it; tests parse arrays in-process.
 *
 * A command's module defines its flags and imports the heavy parts only it uses (the
 * gateway's client and undici, the workers, the dashboard's server) when its action runs, and
 * a command line that names its command imports that command's module alone (COMMANDS): a
 * command starts with its own flags and code, not every command's, and a load's memory is the
 * load's own. `--help`, `--version` and a name no command has build the whole program.
 */
import { existsSync } from 'node:fs';
import { Command, CommanderError, type OutputConfiguration } from 'commander';
import { UsageError } from '../errors.js';
import { packageVersion } from '../files/package-root.js';
import { environment, type CliContext, type Env } from './environment.js';
import { reportError } from './report-error.js';

export interface ProgramOptions {
  /** The environment a command runs with; read from process.env (and .env) unless a test gives one. */
  environment?: () => Env;
  /** Where commander writes help and its own errors; stdout and stderr unless a test gives other. */
  output?: OutputConfiguration;
}

/** Adds a module's commands to the program. */
type Register = (program: Command, context: CliContext) => void;

/**
 * Each command's names and its module, in the order `--help` lists them. A module is imported
 * when its command runs (or the whole program is built): a command's start is its own code's,
 * not every command's (`realty-batch status` took 1.06 s of CPU to start here with every
 * module, 0.69 with its own: docs/performance.md).
 */
const COMMANDS: ReadonlyArray<readonly [names: readonly string[], load: () => Promise<Register>]> = [
  [['run'], async () => (await import('./commands/run.js')).registerRunCommand],
  [['load'], async () => (await import('./commands/load.js')).registerLoadCommand],
  [['work'], async () => (await import('./commands/work.js')).registerWorkCommand],
  [['results'], async () => (await import('./commands/results.js')).registerResultsCommand],
  [['payments'], async () => (await import('./commands/payments.js')).registerPaymentsCommand],
  [['to-sign'], async () => (await import('./commands/to-sign.js')).registerToSignCommand],
  [['sign'], async () => (await import('./commands/sign.js')).registerSignCommand],
  [['documents'], async () => (await import('./commands/documents.js')).registerDocumentsCommand],
  [['answer'], async () => (await import('./commands/answer.js')).registerAnswerCommand],
  [
    ['cancel', 'suspend', 'resume'],
    async () => {
      const { registerActionCommand } = await import('./commands/action.js');
      return (program, context) => {
        for (const action of ['cancel', 'suspend', 'resume'] as const) registerActionCommand(program, context, action);
      };
    },
  ],
  [['retry'], async () => (await import('./commands/retry.js')).registerRetryCommand],
  [['status'], async () => (await import('./commands/status.js')).registerStatusCommand],
  [['track'], async () => (await import('./commands/track.js')).registerTrackCommand],
  [
    ['ledger'],
    async () => {
      const [{ registerLedgerCommand }, { registerLedgerImportCommand }] = await Promise.all([
        import('./commands/ledger.js'),
        import('./commands/ledger-import.js'),
      ]);
      return (program, context) => registerLedgerImportCommand(registerLedgerCommand(program, context), context);
    },
  ],
  [['schedule'], async () => (await import('./commands/schedule.js')).registerScheduleCommand],
  [['dashboard'], async () => (await import('./commands/dashboard.js')).registerDashboardCommand],
  [['db'], async () => (await import('./commands/db.js')).registerDbCommand],
  [['sandbox'], async () => (await import('./commands/sandbox.js')).registerSandboxCommand],
];

/**
 * The command a command line names: its first word that is not the program's own option (and
 * not `--env-file`'s value). Undefined when it names none, or asks the program itself for its
 * help or version first: the whole program answers those.
 */
export function commandNamed(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--env-file') i++;
    else if (arg.startsWith('--env-file=')) continue;
    else if (arg.startsWith('-')) return undefined;
    else return arg;
  }
  return undefined;
}

/**
 * The program, its commands in the order `--help` lists them; with `only`, the command of that
 * name alone (with the others of its module), when a command has it. Commander never exits the
 * process: it throws.
 */
export async function buildProgram(context: CliContext, output?: OutputConfiguration, only?: string): Promise<Command> {
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
  const named = only === undefined ? undefined : COMMANDS.find(([names]) => names.includes(only));
  // In --help's order, each module imported once whatever the order they arrive in.
  const registers = await Promise.all((named ? [named] : COMMANDS).map(([, load]) => load()));
  for (const register of registers) register(program, context);
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
    const program = await buildProgram(context, options.output, commandNamed(argv.slice(2)));
    await program
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
