/**
 * The project needs nothing outside its own tree: a clone in a folder with nothing beside
 * it passes its unit tests. (The clone is of the last commit; its dependencies are this
 * checkout's node_modules, linked, since installing them again proves nothing about the tree.)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, ROOT } from '../../helpers/cli.js';

describe('a clone of the repository alone in its folder', () => {
  let lonely: string;
  let clone: string;

  beforeAll(() => {
    lonely = mkdtempSync(join(tmpdir(), 'realty-batch-clone-'));
    clone = join(lonely, 'realty-batch');
    execFileSync('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone]);
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
  }, 60_000);
  afterAll(() => rmSync(lonely, { recursive: true, force: true }));

  it('has nothing beside it', () => {
    expect(readdirSync(lonely)).toEqual(['realty-batch']);
  });

  it('passes its unit tests there', () => {
    const state = mkdtempSync(join(tmpdir(), 'realty-batch-clone-state-'));
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', 'test/unit', '--reporter', 'dot'], {
      cwd: clone,
      encoding: 'utf8',
      // A state folder of its own: a database the clone's commands make never meets this tree's.
      env: childEnv({ NO_COLOR: '1', FORCE_COLOR: '0', CI: '1', XDG_STATE_HOME: state }),
      timeout: 240_000,
    });
    rmSync(state, { recursive: true, force: true });
    expect(r.status, `${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`).toBe(0);
    expect(r.stdout).toMatch(/Test Files\s+\d+ passed/);
  }, 300_000);
});
