/**
 * Node 20 everywhere: every package the lock file installs accepts the Node that runs the
 * tests (npm ci would warn EBADENGINE otherwise, and a package may use what Node 20 lacks).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

interface LockPackage {
  version?: string;
  engines?: { node?: string } | string[];
  optional?: boolean;
  os?: string[];
}

const lock = JSON.parse(readFileSync(join(ROOT, 'npm-shrinkwrap.json'), 'utf8')) as { packages: Record<string, LockPackage> };

describe('the locked dependencies', () => {
  it("each accept this Node's version in their engines", () => {
    const refused = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      // A package for another OS is never installed here.
      .filter(([, p]) => !(p.optional && p.os && !p.os.includes(process.platform)))
      .flatMap(([path, p]) => {
        const range = Array.isArray(p.engines) ? undefined : p.engines?.node;
        return range && !semver.satisfies(process.version, range)
          ? [`${path.replace(/^.*node_modules\//, '')}@${p.version} wants node ${range}`]
          : [];
      });
    expect(refused).toEqual([]);
  });

  it('run on Node 20, the version this project runs on', () => {
    expect(semver.major(process.version)).toBe(20);
  });
});
