/** Step 1 of a deal: its cadastral number, from the row or through suggest. */
import type { Deal } from '../input/deal.js';
import type { RealtyClient } from '../realty/client.js';
import type { SuggestRequest } from '../realty/types.js';
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

export async function resolveCadastralNumber(deal: Deal, client: RealtyClient): Promise<Resolution> {
  if (deal.cadastralNumber) return { kind: 'found', cadastralNumber: deal.cadastralNumber, viaSuggest: false };
  const candidates = await client.suggest(suggestQuery(deal));
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
    case 'not_found':
      return {
        kind: 'not_found',
        cadastralNumbers: match.nearest.map((c) => c.objectCn),
        message:
          match.nearest.length === 0
            ? 'suggest found no object at this address'
            : `suggest found no object equal to this address; nearest: ${match.nearest.map(describeCandidate).join('; ')}`,
      };
  }
}
