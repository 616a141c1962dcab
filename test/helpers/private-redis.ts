/**
 * A redis-server of a test's own (the chaos suite, and the tests that pause or kill it): a free
 * port, AOF fsynced before each answer (the setting under which the ledger's claims survive a
 * crash), no RDB snapshots, its data in a folder of the test's. It can be killed with SIGKILL
 * and started again on the same port and folder, so the AOF brings the data back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './ports.js';
import { waitFor } from './wait-for.js';
import { join } from 'node:path';

export interface PrivateRedis {
  port: number;
  url: string;
  /** SIGKILL, as a crash would: whatever was not yet written to the AOF is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port and folder; resolves once it answers PING (AOF loaded). */
  restart(): Promise<void>;
  /** Kills it for good (idempotent). */
  stop(): Promise<void>;
}

export { freePort };

/** One PING over a raw socket: true on `+PONG` (a Redis still loading its AOF answers `-LOADING`). */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d: Buffer) => {
      answer += d.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

export async function waitForPing(port: number, timeoutMs = 20_000): Promise<void> {
  await waitFor(() => ping(port), { timeoutMs, intervalMs: 50, what: `redis-server on port ${port} to answer PING` });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startPrivateRedis(dir: string): Promise<PrivateRedis> {
  const port = await freePort();
  const log = join(dir, 'redis-server.log');
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const fd = openSync(log, 'a');
    try {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--dir', dir],
        { stdio: ['ignore', fd, fd] },
      );
    } finally {
      closeSync(fd);
    }
    const spawned = child;
    const failed = new Promise<never>((_, reject) => {
      spawned.once('error', reject);
      spawned.once('exit', (code, signal) => reject(new Error(`redis-server exited at start (${code ?? signal}); see ${log}`)));
    });
    failed.catch(() => undefined);
    await Promise.race([waitForPing(port), failed]);
  };

  const kill = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running) return;
    running.kill('SIGKILL');
    await exited(running);
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    restart: start,
    stop: kill,
  };
}
