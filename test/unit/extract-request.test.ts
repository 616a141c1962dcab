import { describe, expect, it } from 'vitest';
import { extract } from '../../src/docflows/extract/index.js';
import { kindNamed } from '../../src/docflows/registry.js';
import { parseProfile } from '../../src/input/profile.js';
import { createDealValidator } from '../../src/input/validate-deal.js';
import { parseRequestId } from '../../src/ledger/entry.js';
import type { DocflowRequest } from '../../src/domain/gateway.js';
import { readExample } from '../helpers/sandbox-http.js';

const example = readExample<DocflowRequest<{ type: string; cadastralNumber: string }>>('object-request.json');
const profile = (() => {
  const parsed = parseProfile(
    JSON.parse(
      JSON.stringify(
        readExample<{ options: { whoUseRestriction: { encumbrancer: unknown[] } } }>('encumbrance-request.json').options.whoUseRestriction
          .encumbrancer[0],
      ),
    ),
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.profile;
})();

describe("an extract's row", () => {
  const validate = (fields: Record<string, string>, order = '2026-11-28') => createDealValidator({ own: extract.own, order })(fields);

  it('names its object by the cadastral number alone, with no owners, an info extract by default', () => {
    const result = validate({ dealId: 'E-1', cadastralNumber: '47:14:1203001:814' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.deal.owners).toEqual([]);
    expect(result.deal.extract).toEqual({ extractType: 'info', order: '2026-11-28' });
  });

  it('needs the address when it has no cadastral number (suggest finds the object), and names the field of each problem', () => {
    const problems = (fields: Record<string, string>) => {
      const result = validate(fields);
      return result.ok ? [] : result.problems.map((p) => `${p.field}: ${p.message}`);
    };
    expect(problems({ dealId: 'E-2' })).toEqual(['region: is required', 'house: is required']);
    expect(
      problems({
        dealId: 'E-3',
        region: 'Новосибирская область',
        city: 'Новосибирск',
        street: 'Челюскинцев',
        house: '14',
        apartment: '81',
      }),
    ).toEqual([]);
    expect(problems({ dealId: 'E-4', cadastralNumber: '47:14:1203001:814', extractType: 'full' })).toEqual([
      'extractType: must be one of info, base, ownership',
    ]);
    // A partial address beside the number is read as an address: its problems are the row's.
    expect(problems({ dealId: 'E-5', cadastralNumber: '47:14:1203001:814', street: 'Челюскинцев' })).toEqual([
      'region: is required',
      'house: is required',
    ]);
  });

  it('is the published example for the equivalent row', () => {
    const result = validate({ dealId: 'E-1', cadastralNumber: example.options.cadastralNumber, extractType: 'info' });
    if (!result.ok) throw new Error('invalid');
    const built = extract.buildRequest(result.deal, example.options.cadastralNumber, profile, 'https://host', example.requestId);
    expect(built).toEqual(example);
  });

  it('is keyed in the ledger by the dealId, the extract and its order: another day or --again is another order, another requestId', () => {
    const keyOf = (extractType: string, order: string) => {
      const result = validate({ dealId: 'E-1', cadastralNumber: '47:14:1203001:814', extractType }, order);
      if (!result.ok) throw new Error('invalid');
      return {
        key: extract.ledgerKey!(result.deal),
        requestId: extract.buildRequest(result.deal, '47:14:1203001:814', profile, 'https://h').requestId!,
      };
    };
    const today = keyOf('info', '2026-11-28');
    expect(today.key).toBe('E-1|info|2026-11-28');
    expect(parseRequestId(today.requestId)).toMatchObject({ type: 'object_request', dealId: 'E-1|info|2026-11-28', n: 0 });
    expect(keyOf('info', '2026-11-28').requestId).toBe(today.requestId);
    expect(keyOf('ownership', '2026-11-28').key).not.toBe(today.key);
    expect(keyOf('info', '2026-11-29').key).not.toBe(today.key);
    expect(keyOf('info', 'again-objects-2').key).toBe('E-1|info|again-objects-2');
    expect(kindNamed('extract')).toBe(extract);
    expect(kindNamed('object_request')).toBe(extract);
  });
});
