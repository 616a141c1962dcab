/**
 * The bench's own redis-server: a free port, no persistence, nothing else in it.
 * Every figure writes under its own prefix and empties the server afterwards, and
 * `used_memory` is the bench's alone. BENCH_REDIS_URL uses another server instead
 * (then each figure deletes only its own keys).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createRedis, type RedisClient } from '../src/redis/connection.js';

export interface BenchRedis {
  url: string;
  /** True when the server is the bench's own (FLUSHALL is then safe). */
  private: boolean;
  /** The bench's own server's process id (its CPU is read off /proc); undefined with BENCH_REDIS_URL. */
  pid: number | undefined;
  connect(): Promise<RedisClient>;
  /** Removes every key of a prefix (`{prefix}...`). */
  clear(prefix: string): Promise<void>;
  /** INFO memory's used_memory, in bytes. */
  usedMemory(): Promise<number>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function startBenchRedis(): Promise<BenchRedis> {
  let child: ChildProcess | undefined;
  let url = process.env.BENCH_REDIS_URL;
  if (!url) {
    const port = await freePort();
    // No RDB, no AOF: nothing of a figure's run touches the disk but the input file.
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
      { stdio: 'ignore' },
    );
    const failed = new Promise<never>((_, reject) => {
      child!.once('error', reject);
      child!.once('exit', (code) => reject(new Error(`redis-server exited at start (${code})`)));
    });
    failed.catch(() => undefined);
    url = `redis://127.0.0.1:${port}`;
    const probe = createRedis(url, { failFast: true });
    probe.on('error', () => undefined);
    const until = Date.now() + 10_000;
    for (;;) {
      const ok = await Promise.race([
        probe
          .connect()
          .then(() => probe.ping())
          .then(
            () => true,
            () => false,
          ),
        failed,
      ]);
      if (ok) break;
      if (Date.now() > until) throw new Error(`redis-server on port ${port} did not answer`);
      probe.disconnect();
      await sleep(50);
    }
    probe.disconnect();
  }
  const admin = createRedis(url);
  await admin.connect();
  const isPrivate = child !== undefined;
  return {
    url,
    private: isPrivate,
    pid: child?.pid,
    async connect() {
      const redis = createRedis(url);
      await redis.connect();
      return redis;
    },
    async clear(prefix) {
      if (isPrivate) {
        await admin.call('FLUSHALL', 'SYNC');
        return;
      }
      let cursor = '0';
      do {
        const [next, keys] = (await admin.call('SCAN', cursor, 'MATCH', `{${prefix}}*`, 'COUNT', '5000')) as [string, string[]];
        cursor = next;
        if (keys.length > 0) await admin.call('UNLINK', ...keys);
      } while (cursor !== '0');
    },
    async usedMemory() {
      const info = (await admin.call('INFO', 'memory')) as string;
      return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
    },
    async stop() {
      admin.disconnect();
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
