import { describe, it, expect } from 'vitest';
import { agreementType } from '../../src/input/document-files.js';

describe('agreementType', () => {
  it('tells a PDF by %PDF-, XML by its first tag (after a BOM and blanks), and nothing else', () => {
    expect(agreementType(Buffer.from('%PDF-1.7\n'))).toBe('pdf');
    expect(agreementType(Buffer.from('<?xml version="1.0"?><a/>'))).toBe('xml');
    expect(agreementType(Buffer.from('\uFEFF\n  <Agreement>'))).toBe('xml');
    expect(agreementType(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'))).toBeUndefined();
    expect(agreementType(Buffer.from('%PDF'))).toBeUndefined();
    expect(agreementType(Buffer.from('< not a tag'))).toBeUndefined();
  });
});
