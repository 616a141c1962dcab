import { describe, expect, it } from 'vitest';
import { rows } from '../../src/cli/print.js';

describe('counts in what the commands print', () => {
  it('says 1 row, and 0 or 2 rows', () => {
    expect(rows(1)).toBe('1 row');
    expect(rows(0)).toBe('0 rows');
    expect(rows(2)).toBe('2 rows');
    expect(rows(1, 'file')).toBe('1 file');
  });
});
