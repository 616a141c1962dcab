/**
 * `realty-batch track` in a process of its own, as a deployment on PostgreSQL runs it
 * (docs/deployment.md, "How long will it take"): the built command on the run's Redis prefix,
 * database and sandbox. While it runs, the worker's own follower leaves the news feed to it
 * (src/feed/follower-lock.ts), so the worker's event loop carries only the deals.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from '../src/redis/connection.js';
import type { Keys } from '../src/redis/keys.js';
import type { BenchContext } from './context.js';
import type { BenchDatabase } from './database.js';
import type { SandboxProcess } from './sandbox.js';

const CLI = fileURLToPath(new URL('../bin/realty-batch.js', import.meta.url));
/** How long the command may take to start and take the feed. */
const START_MS = 30_000;

export interface TrackProcess {
  stop(): Promise<void>;
}

/** Starts `track` and resolves once it runs as the fleet's follower (its key in Redis). */
export async function startTrackProcess(
  ctx: BenchContext,
  redis: RedisClient,
  keys: Keys,
  database: BenchDatabase,
  sandbox: SandboxProcess,
): Promise<TrackProcess> {
  const child = spawn(process.execPath, [CLI, 'track'], {
    env: {
      ...process.env,
      REDIS_URL: ctx.redis.url,
      REALTY_PREFIX: keys.prefix,
      DATABASE_URL: database.url,
      REALTY_API_URL: sandbox.url,
      REALTY_SESSION_ID: sandbox.sessionId,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const until = performance.now() + START_MS;
  while ((await redis.exists(keys.feedDedicated)) !== 1) {
    if (child.exitCode !== null || performance.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`bench: realty-batch track did not start (exit ${child.exitCode}): ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
