/**
 * `retry --outcome not_found|ambiguous` sends a row again only when the registry's answer could
 * differ: its question changed, it names its cadastral number now, or --force (issue 40, point 9).
 */
import { describe, expect, it } from 'vitest';
import { describeUnchanged, registryAnswerCouldDiffer } from '../../src/batch/retry-unchanged.js';
import type { Deal } from '../../src/domain/deal.js';
import type { OutcomeRecord } from '../../src/domain/outcome.js';
import { describeQuery, suggestQuery } from '../../src/worker/deal/resolve-cadastral.js';

const deal = (fields: Partial<Deal> = {}): Deal =>
  ({
    dealId: 'D-7',
    objectType: 'flat',
    region: 'Новосибирская область',
    city: 'Новосибирск',
    street: 'Ленина',
    streetType: 'ул',
    house: '5',
    apartment: '9',
    apartmentType: 'кв',
    areaUnit: '055',
    owners: [{}],
    agreement: { signatureIds: [], fileType: 'pdf' },
    ...fields,
  }) as unknown as Deal;
const registryQuery = (d: Deal) => describeQuery(suggestQuery(d));
const answered = (outcome: OutcomeRecord['outcome'], errorMessage: string): OutcomeRecord => ({
  row: 7,
  dealId: 'D-7',
  outcome,
  attempts: 1,
  errorMessage,
  finishedAt: '2026-11-24T01:30:00.000Z',
});

describe('registryAnswerCouldDiffer', () => {
  const sameQuestion = answered('not_found', `searched ${registryQuery(deal())}: suggest returned nothing`);

  it('keeps back a not_found row whose question to the registry is the one it answered', () => {
    expect(registryAnswerCouldDiffer(sameQuestion, deal(), { registryQuery })).toBe(false);
  });

  it('sends a not_found row again when its address is read into another question now (a loader that reads it better)', () => {
    const older = answered('not_found', 'searched region "Новосибирская обл.", city "г. Новосибирск", house "5": suggest returned nothing');
    expect(registryAnswerCouldDiffer(older, deal(), { registryQuery })).toBe(true);
  });

  it('keeps back an ambiguous row: the same input asks the same question', () => {
    expect(registryAnswerCouldDiffer(answered('ambiguous', 'suggest found 2 objects at this address: …'), deal(), { registryQuery })).toBe(
      false,
    );
  });

  it('sends either again with --force, or when the row names its cadastral number (the registry is not asked)', () => {
    expect(registryAnswerCouldDiffer(sameQuestion, deal(), { registryQuery, force: true })).toBe(true);
    expect(registryAnswerCouldDiffer(sameQuestion, deal({ cadastralNumber: '54:35:000000:1' }), { registryQuery })).toBe(true);
  });

  it('leaves every other outcome to the retry as before', () => {
    expect(registryAnswerCouldDiffer(answered('unavailable', 'the gateway answered 501'), deal(), { registryQuery })).toBe(true);
    expect(registryAnswerCouldDiffer(undefined, deal(), { registryQuery })).toBe(true);
  });

  it('says in one line why a row was not sent and what to do', () => {
    const line = describeUnchanged({ row: 7, dealId: 'D-7', outcome: 'not_found' });
    expect(line).toBe(
      'row 7 (D-7) not_found: not sent again, the registry already answered this address and would answer the same; correct the row in the attention file and load that, or give --force if the registry changed',
    );
    expect(line).not.toContain('\n');
  });
});
