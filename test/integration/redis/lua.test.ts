/**
 * Lua scripts sent together in one turn (src/redis/lua.ts): answered in the order of the calls,
 * a script the server lacks loaded on the way, and a failing script failing its call alone.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { createScriptBatcher, luaScript } from '../../../src/redis/lua.js';
import { harness } from '../../helpers/harness.js';

/** A script the server has never seen (a fresh comment): its first EVALSHA gets NOSCRIPT. */
const unseen = (body: string) => luaScript(`-- ${randomBytes(8).toString('hex')}\n${body}`);

/** A key under the file's prefix, inside its hash tag as the tool's keys are. */
const keyOf = (prefix: string) => (name: string) => `{${prefix}}:${name}`;

// The file's client and prefix, as before.
const it = harness({ per: 'file', label: 'lua', redis: { maxRetriesPerRequest: null } });

describe('scripts sent together', () => {
  it('answers every script of one turn in the order of the calls, loading a script the server lacks', async ({ redis, prefix }) => {
    const key = keyOf(prefix);
    const incr = unseen(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const run = createScriptBatcher(redis);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => run(incr, [key('n')], [i + 1])));
    // Running totals in the order the calls were made: 1, 1+2, 1+2+3, ...
    expect(answers).toEqual(Array.from({ length: 50 }, (_, i) => ((i + 1) * (i + 2)) / 2));
    // Now the server knows it: one more batch needs no EVAL.
    const known = await Promise.all([run(incr, [key('n')], [0]), run(incr, [key('m')], [5])]);
    expect(known).toEqual([1275, 5]);
  });

  it('fails only the call whose script fails', async ({ redis, prefix }) => {
    const key = keyOf(prefix);
    const fail = luaScript(`if ARGV[1] == 'bad' then return redis.error_reply('refused') end return ARGV[1]`);
    const run = createScriptBatcher(redis);
    const [good, bad, other] = await Promise.allSettled([
      run(fail, [key('x')], ['ok']),
      run(fail, [key('x')], ['bad']),
      run(fail, [key('x')], ['fine']),
    ]);
    expect(good).toEqual({ status: 'fulfilled', value: 'ok' });
    expect(bad.status).toBe('rejected');
    expect((bad as PromiseRejectedResult).reason).toBeInstanceOf(Error);
    expect(String((bad as PromiseRejectedResult).reason)).toContain('refused');
    expect(other).toEqual({ status: 'fulfilled', value: 'fine' });
  });
});
