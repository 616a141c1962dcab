import { describe, it, expect } from 'vitest';
import { matchCandidate, normalizeStreet } from '../../src/worker/deal/match-candidate.js';
import type { SuggestCandidate } from '../../src/domain/gateway.js';
import { readExample } from '../helpers/sandbox-http.js';

const published = readExample<SuggestCandidate[]>('suggest-response.json');
const candidate = (objectCn: string, street: string, house: string, apartment: string): SuggestCandidate => ({
  ...published[0]!,
  objectCn,
  street,
  house,
  apartment,
});

describe('picking the candidate equal to the row', () => {
  it('picks 54:35:000000:5911 for house 39, room 120 of the published answer, never 39/1', () => {
    const result = matchCandidate({ street: 'Татьяны Снежиной', house: '39', apartment: '120' }, published);
    expect(result.kind === 'found' && result.candidate.objectCn).toBe('54:35:000000:5911');
  });

  it('picks 39/1 when the row asks 39/1', () => {
    const result = matchCandidate({ street: 'ул. Татьяны Снежиной', house: '39/1', apartment: '120' }, published);
    expect(result.kind === 'found' && result.candidate.objectCn).toBe('54:35:000000:5013');
  });

  it('ignores case, ё, street-type words, spaces and edge punctuation', () => {
    const list = [candidate('66:41:0204016:101', 'ФЁДОРОВА|УЛ', '7|2|', '15А')];
    // The row's `кв.` and `д.` are gone at load (test/unit/address-parts.test.ts).
    for (const street of ['федорова', 'ул. Фёдорова', 'улица  ФЕДОРОВА', ' Федорова, ']) {
      expect(matchCandidate({ street, house: ' 7 ', building: '2', apartment: '15 а' }, list).kind).toBe('found');
    }
    expect(normalizeStreet('пр-кт Ленина')).toBe(normalizeStreet('Ленина проспект'));
  });

  it('reports not_found with the nearest candidates when none is equal', () => {
    const result = matchCandidate({ street: 'Татьяны Снежиной', house: '39', apartment: '121' }, published);
    expect(result.kind).toBe('not_found');
    expect(result.kind === 'not_found' && result.nearest.length).toBe(2);
  });

  it('reports ambiguous with every equal cadastral number', () => {
    const list = [candidate('54:35:071717:301', 'ЛЕНИНА|УЛ', '5||', '1'), candidate('54:35:071717:302', 'ЛЕНИНА|УЛ', '5||', '1')];
    const result = matchCandidate({ street: 'Ленина', house: '5', apartment: '1' }, list);
    expect(result.kind === 'ambiguous' && result.candidates.map((c) => c.objectCn)).toEqual(['54:35:071717:301', '54:35:071717:302']);
  });

  it('does not match a building the row does not have', () => {
    const list = [candidate('66:41:0204016:101', 'ЛЕНИНА|УЛ', '7|2|', '15')];
    expect(matchCandidate({ street: 'Ленина', house: '7', apartment: '15' }, list).kind).toBe('not_found');
  });
});
