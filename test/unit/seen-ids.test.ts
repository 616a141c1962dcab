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

describe('the property of the first row of each dealId', () => {
  it('tells whether a repeated dealId is for the same property, another one, or one that cannot be told', () => {
    const seen = new SeenIds();
    expect(seen.first('D-1', 1, { cadastralNumber: '54:35:1:1', address: 'a, 1' })).toBeUndefined();
    expect(seen.first('D-2', 2, { address: 'b, 2' })).toBeUndefined();
    for (let row = 3; row <= 100_000; row++) seen.first(`X-${row}`, row, { address: `x ${row}` });
    expect(seen.first('D-1', 100_001, { cadastralNumber: '54:35:1:1' })).toEqual({ row: 1, property: 'same' });
    expect(seen.first('D-1', 100_002, { cadastralNumber: '54:35:1:2', address: 'a, 1' })).toEqual({ row: 1, property: 'different' });
    expect(seen.first('D-2', 100_003, { address: 'b, 2' })).toEqual({ row: 2, property: 'same' });
    expect(seen.first('D-2', 100_004, { cadastralNumber: '54:35:1:3', address: 'b, 3' })).toEqual({ row: 2, property: 'unknown' });
    expect(seen.first('X-99999', 100_005, { address: 'x 99999' })).toEqual({ row: 99_999, property: 'same' });
  });
});
