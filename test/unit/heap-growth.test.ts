/**
 * The V8 settings the CLI's load runs under: what withBoundedHeap asks of V8 before the load,
 * and that it puts V8's own back after it, failed or not (a `run` goes on with its workers in
 * the same process). V8 offers no way to read a flag back, so its setter is watched.
 */
import { describe, it, expect, beforeEach } from 'vitest';
import { withBoundedHeap } from '../../src/cli/heap-growth.js';
import { LOADER } from '../../src/config.js';

const flags: string[] = [];
const watch = (flag: string): void => void flags.push(flag);

describe('withBoundedHeap', () => {
  beforeEach(() => {
    flags.length = 0;
  });

  it('bounds the heap growth and scavenges without helper threads while the load runs, then puts both back', async () => {
    let during: string[] = [];
    const result = await withBoundedHeap(async () => {
      during = [...flags];
      return 42;
    }, watch);
    expect(result).toBe(42);
    expect(during).toEqual([`--heap-growing-percent=${LOADER.heapGrowthPercent}`, '--no-parallel-scavenge']);
    expect(flags.slice(during.length)).toEqual(['--heap-growing-percent=0', '--parallel-scavenge']);
  });

  it('puts V8 back when the load fails', async () => {
    await expect(
      withBoundedHeap(async () => {
        throw new Error('the input is broken');
      }, watch),
    ).rejects.toThrow('the input is broken');
    expect(flags.slice(-2)).toEqual(['--heap-growing-percent=0', '--parallel-scavenge']);
  });
});
