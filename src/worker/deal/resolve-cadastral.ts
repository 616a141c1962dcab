/** Step 1 of a deal: its cadastral number, from the row or through suggest. */
import type { Deal } from '../../domain/deal.js';
import type { RealtyClient } from '../../realty/client.js';
import type { SuggestRequest } from '../../domain/gateway.js';
import { describeCandidate, matchCandidate } from './match-candidate.js';

export type Resolution =
  | { kind: 'found'; cadastralNumber: string; viaSuggest: boolean }
  | { kind: 'not_found'; message: string; cadastralNumbers: string[] }
  | { kind: 'ambiguous'; message: string; cadastralNumbers: string[] };

export function suggestQuery(deal: Deal): SuggestRequest {
  const query: SuggestRequest = { region: { name: deal.region } };
  if (deal.district) query.district = { name: deal.district };
  if (deal.city) query.city = { name: deal.city };
  if (deal.settlement) query.settlement = { name: deal.settlement };
  if (deal.street) query.street = { name: deal.street };
  const house: NonNullable<SuggestRequest['house']> = { number: deal.house };
  if (deal.building) house.buildingNumber = deal.building;
  if (deal.structure) house.sructureNumber = deal.structure;
  query.house = house;
  if (deal.apartment) query.room = { number: deal.apartment };
  return query;
}

/**
 * The query as sent, as a clerk reads it: `region "Свердловская область", city "Екатеринбург",
 * street "Малышева", house "120", apartment "33"` (an address, no person's data).
 */
export function describeQuery(query: SuggestRequest): string {
  const parts: Array<[string, string | undefined]> = [
    ['region', query.region.name],
    ['district', query.district?.name],
    ['city', query.city?.name],
    ['settlement', query.settlement?.name],
    ['street', query.street?.name],
    ['house', query.house?.number],
    ['building', query.house?.buildingNumber],
    ['structure', query.house?.sructureNumber],
    ['apartment', query.room?.number],
  ];
  return parts
    .filter((p): p is [string, string] => p[1] !== undefined)
    .map(([name, value]) => `${name} "${value}"`)
    .join(', ');
}

export async function resolveCadastralNumber(deal: Deal, client: RealtyClient): Promise<Resolution> {
  if (deal.cadastralNumber) return { kind: 'found', cadastralNumber: deal.cadastralNumber, viaSuggest: false };
  const query = suggestQuery(deal);
  const candidates = await client.suggest(query);
  const match = matchCandidate(deal, candidates);
  switch (match.kind) {
    case 'found':
      return { kind: 'found', cadastralNumber: match.candidate.objectCn, viaSuggest: true };
    case 'ambiguous': {
      const numbers = match.candidates.map((c) => c.objectCn);
      return {
        kind: 'ambiguous',
        cadastralNumbers: numbers,
        message: `suggest found ${numbers.length} objects at this address: ${match.candidates.map(describeCandidate).join('; ')}`,
      };
    }
    case 'not_found': {
      const searched = `searched ${describeQuery(query)}`;
      const { nearest } = match;
      const more = candidates.length > nearest.length ? `; ${candidates.length - nearest.length} more` : '';
      return {
        kind: 'not_found',
        cadastralNumbers: nearest.map((c) => c.objectCn),
        message:
          candidates.length === 0
            ? `${searched}: suggest returned nothing`
            : `${searched}: suggest returned ${candidates.length} candidate${candidates.length === 1 ? '' : 's'}, none equal to it: ${nearest.map(describeCandidate).join('; ')}${more}`,
      };
    }
  }
}
