/**
 * `realty-batch work` processes by name, each incarnation's stderr and stdout in a file
 * of its own. An exit the test did not cause (a crash) is kept, with its log, for the
 * test to report: workers are expected to ride out every fault on their own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv, CLI, ROOT } from '../helpers/cli.js';

export interface Crash {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  log: string;
}

export interface WorkerFleet {
  start(name: string): void;
  /** SIGKILL, then waits for the exit. */
  kill(name: string): Promise<void>;
  /** A signal to every live worker; each one's exit code (null when it had to be killed after `timeoutMs`). */
  stop(signal: NodeJS.Signals, timeoutMs: number): Promise<Record<string, number | null>>;
  /** SIGKILL to whatever still runs (idempotent; for afterAll). */
  killAll(): Promise<void>;
  readonly crashes: readonly Crash[];
  /** Every incarnation's log file, in start order. */
  readonly logs: readonly string[];
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** The last lines of a log, to show with a failure. */
export function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export function createWorkerFleet(options: { args: string[]; env: Record<string, string>; logDir: string }): WorkerFleet {
  const live = new Map<string, ChildProcess>();
  const expected = new WeakSet<ChildProcess>();
  const incarnations = new Map<string, number>();
  const crashes: Crash[] = [];
  const logs: string[] = [];

  const start = (name: string): void => {
    const n = (incarnations.get(name) ?? 0) + 1;
    incarnations.set(name, n);
    const log = join(options.logDir, `worker-${name}-${n}.log`);
    logs.push(log);
    const fd = openSync(log, 'a');
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [CLI, 'work', ...options.args], {
        cwd: ROOT,
        env: childEnv(options.env ?? {}),
        stdio: ['ignore', fd, fd],
      });
    } finally {
      closeSync(fd);
    }
    child.once('exit', (code, signal) => {
      if (live.get(name) === child) live.delete(name);
      if (!expected.has(child)) crashes.push({ name: `${name}#${n}`, code, signal, log });
    });
    live.set(name, child);
  };

  const signalAll = async (signal: NodeJS.Signals): Promise<void> => {
    const children = [...live.values()];
    for (const child of children) {
      expected.add(child);
      child.kill(signal);
    }
    await Promise.all(children.map(exited));
  };

  return {
    start,
    async kill(name) {
      const child = live.get(name);
      if (!child) throw new Error(`worker ${name} is not running`);
      expected.add(child);
      child.kill('SIGKILL');
      await exited(child);
    },
    async stop(signal, timeoutMs) {
      const children = [...live.entries()];
      const codes: Record<string, number | null> = {};
      await Promise.all(
        children.map(async ([name, child]) => {
          expected.add(child);
          child.kill(signal);
          let timer: NodeJS.Timeout | undefined;
          const inTime = await Promise.race([
            exited(child).then(() => true),
            new Promise<boolean>((resolve) => {
              timer = setTimeout(() => resolve(false), timeoutMs);
            }),
          ]);
          clearTimeout(timer);
          if (!inTime) {
            child.kill('SIGKILL');
            await exited(child);
          }
          codes[name] = inTime ? child.exitCode : null;
        }),
      );
      return codes;
    },
    killAll: () => signalAll('SIGKILL'),
    crashes,
    logs,
  };
}
