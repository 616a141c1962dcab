import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isValidInn, isValidOgrn, isValidSnils } from '../../src/input/checksums.js';
import { SAMPLE_FILES, writeSamples } from '../../scripts/gen-samples.js';
import { ROOT } from '../helpers/cli.js';

// A change to the checksums, the sandbox's suggest, the worker's matching or the
// generator that alters the samples fails here: regenerate them with `npm run samples`.
describe('scripts/gen-samples.ts', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-samples-'));
    writeSamples(dir);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(SAMPLE_FILES)('writes samples/%s byte for byte', async (name) => {
    const written = await readFile(join(dir, name));
    const committed = await readFile(join(ROOT, 'samples', name));
    // Text first, for a readable diff; then the bytes.
    expect(written.toString('utf8')).toBe(committed.toString('utf8'));
    expect(written.equals(committed)).toBe(true);
  });

  it('gives the bank profile valid INN, OGRN and SNILS', () => {
    const profile = JSON.parse(readFileSync(join(dir, 'bank-profile.json'), 'utf8')) as {
      organization: { inn: string; ogrn: string };
      representative: { person: { snils: string } };
    };
    expect(isValidInn(profile.organization.inn)).toBe(true);
    expect(isValidOgrn(profile.organization.ogrn)).toBe(true);
    expect(isValidSnils(profile.representative.person.snils)).toBe(true);
  });
});
