import { describe, expect, it } from 'vitest';
import { waitFor, WaitForTimeoutError } from '../helpers/wait-for.js';

describe('waitFor', () => {
  it('resolves with the first truthy value, checking again after each interval', async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? { calls } : undefined), { timeoutMs: 1000, intervalMs: 5, what: 'the third call' });
    expect(value).toEqual({ calls: 3 });
    expect(calls).toBe(3);
  });

  it('checks once and does not wait when the condition already holds', async () => {
    let calls = 0;
    const started = Date.now();
    expect(await waitFor(async () => ++calls, { timeoutMs: 10_000, intervalMs: 5_000, what: 'anything' })).toBe(1);
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('times out with an error naming what it waited for and the last value seen', async () => {
    let calls = 0;
    const started = Date.now();
    const count = async () => {
      calls++;
      return 0;
    };
    const err = await waitFor(count, { timeoutMs: 50, intervalMs: 5, what: 'the outcomes' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitForTimeoutError);
    expect((err as Error).message).toBe('timed out after 50 ms waiting for the outcomes (last value: 0)');
    expect(err).toMatchObject({ what: 'the outcomes', timeoutMs: 50, lastValue: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(calls).toBeGreaterThan(1);
  });

  it('rejects at once with the error the check throws', async () => {
    let calls = 0;
    const check = () => {
      calls++;
      throw new Error('Redis is away');
    };
    await expect(waitFor(check, { timeoutMs: 1000, intervalMs: 5, what: 'Redis' })).rejects.toThrow('Redis is away');
    expect(calls).toBe(1);
  });
});
