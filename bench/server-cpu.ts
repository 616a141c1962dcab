/**
 * The CPU of the servers the bench talks to (its own redis-server, PostgreSQL's backends), read
 * off /proc: the work a write costs there is part of its cost, as SQLite's is part of the bench's
 * own process. Linux only; elsewhere a server's CPU reads as unknown (0 in the figures, said so).
 */
import { readFileSync } from 'node:fs';

/** Nanoseconds on CPU so far of a single-threaded server process (its main thread: Redis and a PostgreSQL backend do their work there). */
export function processCpuNs(pid: number): number | undefined {
  try {
    // schedstat's first field is the thread's time on a CPU in ns; stat's utime + stime are in 10 ms ticks.
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

/** CPU (ns) spent between two readings; a process that started meanwhile counts from zero, one that ended is lost. */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ns = 0;
  for (const [pid, at] of after) ns += at - (before.get(pid) ?? 0);
  return ns;
}

/** One process's reading as a map, empty when it is not known. */
export function cpuOf(pid: number | undefined): Map<number, number> {
  const ns = pid === undefined ? undefined : processCpuNs(pid);
  return ns === undefined ? new Map<number, number>() : new Map([[pid!, ns]]);
}
