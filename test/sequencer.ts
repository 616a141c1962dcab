/**
 * The order test files start in: the longest first, so that the last minute of a run is not one
 * long file alone on a core while the others idle. Vitest sorts by the durations of this
 * machine's last run (node_modules/.vite), which a fresh clone (CI) does not have: it then ran the
 * files in the order it found them, and a 60-second file could start last. The durations of a
 * full run here are kept in test/durations.json (`npm run test:durations` rewrites them from a
 * run's JSON report); this machine's own last run wins where it has one. A file in neither
 * (a new one) goes first: it may be long.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

function keptDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

export class LongestFirst extends BaseSequencer {
  private readonly kept = keptDurations();

  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const duration = (spec: TestSpecification): number => {
      const file = relative(root, spec.moduleId);
      const here = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      return here?.duration ?? this.kept[file] ?? Number.POSITIVE_INFINITY;
    };
    const known = files.map((spec) => ({ spec, ms: duration(spec) }));
    known.sort((a, b) => b.ms - a.ms);
    return Promise.resolve(known.map((k) => k.spec));
  }
}
