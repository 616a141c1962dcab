import { describe, it, expect } from 'vitest';
import { SeenIds } from '../../src/input/seen-ids.js';

describe('the dealIds a file has shown', () => {
  it('gives the first row of a repeated id, and nothing for a new one, across growth', () => {
    const seen = new SeenIds();
    for (let row = 1; row <= 200_000; row++) expect(seen.firstRow(`NSK-2026-${row}`, row)).toBeUndefined();
    expect(seen.firstRow('NSK-2026-1', 200_001)).toBe(1);
    expect(seen.firstRow('NSK-2026-199999', 200_002)).toBe(199_999);
    expect(seen.firstRow('nsk-2026-1', 200_003)).toBeUndefined();
  });
});
