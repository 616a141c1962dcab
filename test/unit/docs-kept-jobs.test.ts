/** What docs/personal-data.md says BullMQ keeps of finished jobs is what the worker is given (TUNABLES.keptJobs). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DAY, TUNABLES } from '../../src/config.js';

const manual = readFileSync(new URL('../../docs/personal-data.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');

describe("the manual's word on finished jobs", () => {
  it('says the worker keeps the last completed and failed jobs by count, failed ones for at most their age, and no week of them', () => {
    const { completed, failed, failedMaxAgeMs } = TUNABLES.keptJobs;
    const count = (n: number) => n.toLocaleString('en-US');
    expect(manual).toContain(
      `BullMQ keeps only the last ${count(completed)} completed jobs of the fleet, and the last ${count(failed)} failed ones for at most ${failedMaxAgeMs / DAY} days`,
    );
    expect(manual).not.toMatch(/removes finished jobs 7 days/);
  });
});
