/** The deal queue paused for a refused session, resumed by the next `run` or `work`. No Redis: stand-ins. */
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { resumeAfterRefusedSession } from '../../src/cli/session-pause.js';
import { createLogger } from '../../src/logger.js';
import type { RedisClient } from '../../src/redis/connection.js';
import { createKeys } from '../../src/redis/keys.js';

const keys = createKeys('cli-session-pause-test');

function setUp(reason: string | null) {
  const stored = new Map<string, string>(reason === null ? [] : [[keys.pauseReason, reason]]);
  const redis = {
    get: vi.fn(async (key: string) => stored.get(key) ?? null),
    del: vi.fn(async (key: string) => (stored.delete(key) ? 1 : 0)),
  };
  const queue = { resume: vi.fn(async () => undefined) };
  const lines: string[] = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    }),
  });
  return { stored, redis, queue, lines, logger, client: redis as unknown as RedisClient };
}

describe('resumeAfterRefusedSession', () => {
  it('resumes a queue paused for a refused session, forgets why, and warns who resumed it', async () => {
    const s = setUp('session');
    await expect(
      resumeAfterRefusedSession({ redis: s.client, keys, queue: s.queue, logger: s.logger, resumedBy: 'for this run' }),
    ).resolves.toBe(true);
    expect(s.queue.resume).toHaveBeenCalledTimes(1);
    expect(s.stored.has(keys.pauseReason)).toBe(false);
    s.logger.flush();
    await vi.waitFor(() => expect(s.lines.join('')).toContain('the queue was paused for a refused session; resumed for this run'));
    expect(JSON.parse(s.lines[0]!)).toMatchObject({ level: 40 });
  });

  it('leaves a queue paused by someone else paused', async () => {
    for (const reason of [null, 'operator']) {
      const s = setUp(reason);
      await expect(
        resumeAfterRefusedSession({ redis: s.client, keys, queue: s.queue, logger: s.logger, resumedBy: "with this worker's session" }),
      ).resolves.toBe(false);
      expect(s.queue.resume).not.toHaveBeenCalled();
      expect(s.redis.del).not.toHaveBeenCalled();
    }
  });
});
