/** The Lua the Redis side runs lives in src/redis/lua/: each script says what it takes and gives, and includes are expanded once. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { luaText } from '../../src/redis/lua.js';
import { ROOT } from '../helpers/cli.js';

const DIR = join(ROOT, 'src/redis/lua');
const scripts = readdirSync(DIR)
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.replace(/\.lua$/, ''));

describe('the Lua scripts', () => {
  it('each opens with a header naming its input and its output', () => {
    expect(scripts.length).toBeGreaterThan(5);
    for (const name of scripts) {
      const text = readFileSync(join(DIR, `${name}.lua`), 'utf8');
      expect(text, name).toMatch(/^--\[\[\n[\s\S]*\n {4}Input:\n[\s\S]*\n {4}Output:\n[\s\S]*?\]\]\n/);
    }
  });

  it('are sent without their header, each include once in place of its line', () => {
    const release = luaText('token-release');
    expect(release).not.toContain('Input:');
    expect(release).not.toContain('@include');
    expect(release.match(/local function releaseIfHolder/g)).toHaveLength(1);
    expect(release.trim().split('\n').at(-1)).toBe('return releaseIfHolder(KEYS[1], ARGV[1])');
  });
});
