/**
 * The V8 settings a load runs under, both the whole process's (the CLI owns the process, so
 * the CLI sets them; loadBatch, a library call, does not) and put back after the load, for a
 * worker that runs after it in the same process (`run`):
 * - The heap kept near what it holds alive: V8 grows the old generation by up to 4 times what
 *   the last full GC kept before it collects again, and a load promotes the rows in flight at
 *   every scavenge (they outlive two), so a long load's heap would be mostly garbage.
 *   `LOADER.heapGrowthPercent` bounds that growth while the load runs.
 * - Scavenges on the thread that allocates, not spread over V8's helper threads: a load keeps
 *   its cores busy (the main thread and the reading thread, Redis beside them), so the helper
 *   threads' CPU would be taken from that work, not from idle cores
 *   (docs/performance.md, "Scavenges without V8's helper threads").
 */
import { setFlagsFromString } from 'node:v8';
import { LOADER } from '../config.js';

/**
 * Runs `load` under the bounded heap, and puts V8's settings back after it, failed or not.
 * `setFlags`: V8's setter (a test watches it: V8 offers no way to read a flag back).
 */
export async function withBoundedHeap<T>(load: () => Promise<T>, setFlags: (flags: string) => void = setFlagsFromString): Promise<T> {
  // Read at every full GC (V8's heap controller), so it applies from the next one on.
  setFlags(`--heap-growing-percent=${LOADER.heapGrowthPercent}`);
  // Read at every scavenge, of the main thread's heap and the reading thread's alike.
  if (!LOADER.parallelScavenge) setFlags('--no-parallel-scavenge');
  try {
    return await load();
  } finally {
    // 0: V8 chooses the factor again (its default), for a worker that runs after the load.
    setFlags('--heap-growing-percent=0');
    if (!LOADER.parallelScavenge) setFlags('--parallel-scavenge');
  }
}
