/**
 * A load's heap kept near what it holds alive: V8 grows the old generation by up to 4
 * times what the last full GC kept before it collects again, and a load promotes the rows
 * in flight at every scavenge (they outlive two), so a million-row load reached 290 MB of
 * RSS for about 30 MB of live heap. `LOADER.heapGrowthPercent` bounds that growth while the
 * load runs. The setting is V8's and the whole process's: the CLI owns the process, so the
 * CLI sets it (loadBatch, a library call, does not), and puts V8's own factor back after.
 */
import { setFlagsFromString } from 'node:v8';
import { LOADER } from '../config.js';

export async function withBoundedHeap<T>(load: () => Promise<T>): Promise<T> {
  // Read at every full GC (V8's heap controller), so it applies from the next one on.
  setFlagsFromString(`--heap-growing-percent=${LOADER.heapGrowthPercent}`);
  try {
    return await load();
  } finally {
    // 0: V8 chooses the factor again (its default), for a worker that runs after the load.
    setFlagsFromString('--heap-growing-percent=0');
  }
}
