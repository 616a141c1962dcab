/** withRedis: one connection per command, always let go. No Redis: a stand-in client. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Env } from '../../src/cli/environment.js';
import { withRedis } from '../../src/cli/with-redis.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import type { RedisClient } from '../../src/redis/connection.js';
import { createKeys } from '../../src/redis/keys.js';

/** A client that is `status` and whose QUIT does what `quit` says. */
function standIn(status: string, quit: () => Promise<unknown> = async () => 'OK') {
  return { status, quit: vi.fn(quit), disconnect: vi.fn() };
}

function envWith(client: ReturnType<typeof standIn>) {
  const config = loadConfig({ REALTY_PREFIX: 'cli-with-redis-test' });
  const connect = vi.fn<Env['connect']>(async () => client as unknown as RedisClient);
  const env: Env = { config, logger: createLogger({ level: 'silent' }), keys: createKeys(config.prefix), connect };
  return { env, connect };
}

describe('withRedis', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("connects to the configured Redis, fails fast unless told otherwise, and gives back the command's value", async () => {
    const client = standIn('ready');
    const { env, connect } = envWith(client);
    await expect(withRedis(env, async (redis) => (redis === (client as unknown) ? 'same' : 'other'))).resolves.toBe('same');
    expect(connect).toHaveBeenCalledWith(env.config.redis, { failFast: true });
    await withRedis(env, async () => undefined, { failFast: false });
    expect(connect).toHaveBeenLastCalledWith(env.config.redis, { failFast: false });
  });

  it('quits once the command is done, and does not cut the socket after a clean QUIT', async () => {
    const client = standIn('ready');
    await withRedis(envWith(client).env, async () => undefined);
    expect(client.quit).toHaveBeenCalledTimes(1);
    expect(client.disconnect).not.toHaveBeenCalled();
  });

  it("quits when the command throws, and the command's error is what the caller sees", async () => {
    const client = standIn('ready', async () => {
      throw new Error('QUIT refused');
    });
    await expect(
      withRedis(envWith(client).env, async () => {
        throw new Error('the command failed');
      }),
    ).rejects.toThrow('the command failed');
    expect(client.quit).toHaveBeenCalledTimes(1);
    // QUIT failed too: the socket is closed anyway.
    expect(client.disconnect).toHaveBeenCalledTimes(1);
  });

  it('disconnects without QUIT when the connection is not up (QUIT would wait for Redis for ever)', async () => {
    const client = standIn('reconnecting');
    await withRedis(envWith(client).env, async () => undefined);
    expect(client.quit).not.toHaveBeenCalled();
    expect(client.disconnect).toHaveBeenCalledTimes(1);
  });

  it('disconnects when QUIT has no answer within a second', async () => {
    vi.useFakeTimers();
    const client = standIn('ready', () => new Promise(() => undefined));
    const done = withRedis(envWith(client).env, async () => 'value');
    await vi.advanceTimersByTimeAsync(999);
    expect(client.disconnect).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toBe('value');
    expect(client.disconnect).toHaveBeenCalledTimes(1);
  });

  it('runs nothing when the connection fails', async () => {
    const config = loadConfig({});
    const fn = vi.fn(async () => undefined);
    const env: Env = {
      config,
      logger: createLogger({ level: 'silent' }),
      keys: createKeys(config.prefix),
      connect: async () => {
        throw new Error('refused');
      },
    };
    await expect(withRedis(env, fn)).rejects.toThrow('refused');
    expect(fn).not.toHaveBeenCalled();
  });
});
