/** What every figure shares: the result shape, medians, progress lines and the table. */
import { writeFile } from 'node:fs/promises';

export interface Figure {
  name: string;
  /** The ratio for `-ratio` figures, else the raw measurement (the median of the runs). */
  value: number;
  unit: string;
  /** A ratio's denominator, measured in the same run on the same machine (raw, in `rawUnit`); null when none. */
  baseline: number | null;
  target: number | null;
  better: 'higher' | 'lower';
  /** A ratio's numerator: the project's own raw figure (median), in `rawUnit`. */
  measured?: number;
  rawUnit?: string;
  /** How many times it was measured; the value is the median of these. */
  runs: number;
  /** Every run's value (ratios: every run's ratio), in order. */
  samples?: number[];
  note?: string;
  /** Anything else a reader may want: per-run raws, methods. */
  details?: Record<string, unknown>;
}

const started = performance.now();

/** Seconds since the bench started, for progress lines. */
export function elapsed(): string {
  return `${((performance.now() - started) / 1000).toFixed(1)}s`;
}

export function progress(message: string): void {
  console.log(`[${elapsed().padStart(7)}] ${message}`);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Steps of hostLoopMs's loop. */
const HOST_LOOP_STEPS = 100_000_000;
/** What hostLoopMs gives on the machine of bench/README at the host's normal speed (slow phases gave 138 to 212). */
export const HOST_LOOP_REFERENCE_MS = 110;

/**
 * How fast the host runs right now: a fixed integer loop, timed three times (the
 * median, in ms). It does no I/O and allocates nothing, so it moves only with the
 * CPU time the host gives this process: read against the same line of another run,
 * it tells a slow phase of the machine from a slower build.
 */
export function hostLoopMs(): number {
  const times: number[] = [];
  let x = 1;
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    x = spin(HOST_LOOP_STEPS, x);
    times.push(performance.now() - started);
  }
  // The result is used, so the loop cannot be dropped as dead code.
  if (x === 0.5) console.log(x);
  return Math.round(median(times));
}

function spin(steps: number, seed: number): number {
  let x = seed;
  for (let i = 0; i < steps; i++) x = (Math.imul(x, 48271) + i) | 0;
  return x;
}

/** Ratios to 3 decimals; counts and rates to whole units (3 significant digits below 100). */
export const round = (value: number): number =>
  Math.abs(value) >= 100 ? Math.round(value) : Math.abs(value) >= 1 ? Number(value.toPrecision(3)) : Math.round(value * 1000) / 1000;

/** Frees what the previous run left, so one run's garbage is not collected during the next. */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * A ratio figure from paired runs: run i of the project against run i of the
 * baseline; the value is the median of the run ratios, `measured` and
 * `baseline` the medians of the raws.
 */
export function ratioFigure(
  name: string,
  project: number[],
  baseline: number[],
  rawUnit: string,
  target: number | null,
  note?: string,
): Figure {
  const ratios = project.map((p, i) => p / baseline[i]!);
  return {
    name,
    value: round(median(ratios)),
    unit: 'ratio',
    baseline: round(median(baseline)),
    target,
    better: 'higher',
    measured: round(median(project)),
    rawUnit,
    runs: project.length,
    samples: ratios.map((r) => round(r)),
    ...(note ? { note } : {}),
  };
}

export function rawFigure(
  name: string,
  samples: number[],
  unit: string,
  target: number | null,
  better: 'higher' | 'lower',
  note?: string,
): Figure {
  return {
    name,
    value: round(median(samples)),
    unit,
    baseline: null,
    target,
    better,
    runs: samples.length,
    samples: samples.map((s) => round(s)),
    ...(note ? { note } : {}),
  };
}

export function meetsTarget(f: Figure): boolean | undefined {
  if (f.target === null) return undefined;
  return f.better === 'higher' ? f.value >= f.target : f.value <= f.target;
}

export function printTable(figures: Figure[]): void {
  const rows = figures.map((f) => {
    const met = meetsTarget(f);
    return [
      f.name,
      `${f.value} ${f.unit}`,
      f.measured !== undefined ? `${f.measured} ${f.rawUnit ?? ''}` : '',
      f.baseline !== null ? `${f.baseline} ${f.rawUnit ?? ''}` : '',
      f.target === null ? '-' : `${f.better === 'higher' ? '>=' : '<='} ${f.target}`,
      met === undefined ? '' : met ? 'ok' : 'MISSED',
      String(f.runs),
    ];
  });
  const head = ['figure', 'value', 'measured', 'baseline', 'target', '', 'runs'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

/** bench/results.json: which profile made it, on what host, how long each group took, and the figures. */
export interface Results {
  profile: string;
  runs: number;
  rows: number;
  finishedAt: string;
  totalSeconds: number;
  groupSeconds: Record<string, number>;
  host: { cores: number; loadAverage: number[]; hostLoopMs: [number, number] };
  figures: Figure[];
}

export async function writeResults(file: string, results: Results): Promise<void> {
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
}
