/** `realty-batch sandbox`: the gateway emulator in the foreground until a signal. */
import { InvalidArgumentError, type Command } from 'commander';
import {
  DEFAULT_LIFECYCLE_MS,
  parseProbability,
  REQUEST_IDS_MODES,
  startSandbox,
  type RequestIdsMode,
  type SandboxOptions,
} from '../../sandbox/index.js';
import { nonNegativeInt } from '../flags.js';
import { aborted, onShutdownSignals } from '../shutdown.js';

export interface SandboxFlags {
  port: number;
  host: string;
  registry?: string;
  strictContents?: boolean;
  sessions: string[];
  restrictedSessions: string[];
  users: string[];
  sessionTtlMs?: number;
  egronRegions: string[];
  fault501?: number;
  fault5xx?: number;
  faultReset?: number;
  faultLost?: number;
  latencyMs: number;
  seed?: number;
  requestIds: RequestIdsMode;
  newsLagMs: number;
  lifecycleMs: number;
  faultRegistry?: number;
  payment?: number;
}

const list = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** `login:password:accountId,...`: a malformed one is a usage error (exit 2). */
function users(value: string): string[] {
  const all = list(value);
  for (const user of all) {
    if (!/^[^:]+:.+:[^:]+$/.test(user)) throw new InvalidArgumentError('--users takes login:password:accountId,... (each part not empty).');
  }
  return all;
}

/** A bad probability is a usage error (exit 2), like every other flag's. */
const probability =
  (flag: string) =>
  (value: string): number => {
    try {
      return parseProbability(flag, value);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };

function requestIdsMode(value: string): RequestIdsMode {
  const mode = REQUEST_IDS_MODES.find((m) => m === value.trim().toLowerCase());
  if (mode === undefined) throw new InvalidArgumentError(`--request-ids must be ${REQUEST_IDS_MODES.join(' or ')}.`);
  return mode;
}

/** The emulator's options: a flag not given leaves the emulator's own default. */
export function sandboxOptions(flags: SandboxFlags): SandboxOptions {
  const { port, host, sessions, restrictedSessions, egronRegions, latencyMs, requestIds, newsLagMs, lifecycleMs } = flags;
  const options: SandboxOptions = { port, host, sessions, restrictedSessions, egronRegions, latencyMs, requestIds, newsLagMs, lifecycleMs };
  if (flags.registry) options.registry = flags.registry;
  if (flags.fault501 !== undefined) options.fault501 = flags.fault501;
  if (flags.fault5xx !== undefined) options.fault5xx = flags.fault5xx;
  if (flags.faultReset !== undefined) options.faultReset = flags.faultReset;
  if (flags.faultLost !== undefined) options.faultLost = flags.faultLost;
  if (flags.faultRegistry !== undefined) options.faultRegistry = flags.faultRegistry;
  if (flags.payment !== undefined) options.payment = flags.payment;
  if (flags.seed !== undefined) options.seed = flags.seed;
  if (flags.users.length > 0) options.users = flags.users;
  if (flags.sessionTtlMs !== undefined) options.sessionTtlMs = flags.sessionTtlMs;
  if (flags.strictContents) options.strictContents = true;
  return options;
}

export function registerSandboxCommand(program: Command): Command {
  return program
    .command('sandbox')
    .description('start the gateway sandbox (a faithful emulator of the contract) until stopped')
    .option('--port <n>', 'listen port (0 = any free; the url is printed)', nonNegativeInt('--port'), 8080)
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--registry <file.json>', "the cadastral objects suggest answers from (default: the samples')")
    .option('--sessions <a,b>', 'session ids accepted after auth.sid', list, ['demo-session'])
    .option(
      '--users <login:password:accountId,...>',
      'who may log in through POST /realty/v1/auth (each login gets a fresh session id)',
      users,
      [],
    )
    .option(
      '--session-ttl-ms <n>',
      'sessions from /auth answer 401 this long after their login (default: never)',
      nonNegativeInt('--session-ttl-ms'),
    )
    .option('--restricted-sessions <c>', 'sessions whose docflow creation answers 403', list, [])
    .option('--egron-regions <A,B>', 'regions whose docflows answer 501 every time', list, [])
    .option('--fault-501 <p>', 'probability of a 501 before handling', probability('--fault-501'))
    .option('--fault-5xx <p>', 'probability of a 500/502/503 before handling', probability('--fault-5xx'))
    .option('--fault-reset <p>', 'probability of a reset connection before handling', probability('--fault-reset'))
    .option('--fault-lost <p>', 'probability that a docflow is created and its answer lost', probability('--fault-lost'))
    .option('--latency-ms <n>', 'added latency per request', nonNegativeInt('--latency-ms'), 0)
    .option('--seed <n>', "makes the faults and the docflows' lives repeatable", nonNegativeInt('--seed'))
    .option(
      '--request-ids <mode>',
      'a repeated requestId: ignore (a new docflow every call, as the worst gateway) or dedupe (the first docflow again)',
      requestIdsMode,
      'ignore',
    )
    .option('--news-lag-ms <n>', 'each change of a docflow appears in the news feed this long after it', nonNegativeInt('--news-lag-ms'), 0)
    .option(
      '--lifecycle-ms <n>',
      "time between two steps of a docflow's life (queued → sent → completed or error)",
      nonNegativeInt('--lifecycle-ms'),
      DEFAULT_LIFECYCLE_MS,
    )
    .option('--fault-registry <p>', 'probability that the register refuses a docflow: it ends in error', probability('--fault-registry'))
    .option(
      '--payment <p>',
      'probability that a sent docflow stops suspended on the state duty until POST /__sandbox/payments/<uin>',
      probability('--payment'),
    )
    .option('--strict-contents', 'refuse (400) a docflow naming a content id never uploaded through POST /contents')
    .action(async (_flags: unknown, cmd: Command) => {
      const options = sandboxOptions(cmd.opts<SandboxFlags>());
      const shutdown = onShutdownSignals('stopping the sandbox');
      const sandbox = await startSandbox(options);
      console.log(`sandbox listening on ${sandbox.url} (REALTY_API_URL=${sandbox.url}; stats at ${sandbox.url}/__sandbox/stats)`);
      await aborted(shutdown.signal);
      await sandbox.close();
    });
}
