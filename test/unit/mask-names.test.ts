/**
 * The red team's spellings of a row's persons, masked with the deal at hand (a creation
 * error, a failed reason: maskPersonalData) and with only the filter its ledger entry keeps
 * (a registry error from the news feed, days later: maskRegistryText).
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { maskRegistryText } from '../../src/feed/item-status.js';
import type { Deal } from '../../src/domain/deal.js';
import { loadProfile, type BankProfile } from '../../src/input/profile.js';
import { createDealValidator } from '../../src/input/validate-deal.js';
import { maskNames } from '../../src/privacy/mask-names.js';
import { exactMatcher, filterMatcher, personFilter } from '../../src/privacy/name-filter.js';
import { keysOfWord, nameKey } from '../../src/privacy/name-key.js';
import { normalizeText } from '../../src/privacy/normalize-text.js';
import { personsOf } from '../../src/privacy/persons.js';
import { maskPersonalData } from '../../src/worker/redact.js';
import { ROOT } from '../helpers/cli.js';
import { HEADER } from '../helpers/fixtures.js';
import { hostileRow, leftOf, registryText, SPELLINGS } from '../helpers/hostile-spellings.js';

describe('a hostile spelling of a row person', () => {
  let deal: Deal;
  let profile: BankProfile;
  beforeAll(async () => {
    profile = await loadProfile(join(ROOT, 'samples/bank-profile.json'));
    const validated = createDealValidator()(Object.fromEntries(HEADER.map((h, i) => [h, hostileRow()[i] ?? ''])));
    if (!validated.ok) throw new Error('the hostile row is valid');
    deal = validated.deal;
  });

  it('has at least thirty spellings to try, each found by the check when left as it is', () => {
    expect(SPELLINGS.length).toBeGreaterThanOrEqual(30);
    for (const spelling of SPELLINGS) expect(leftOf(spelling, registryText(spelling.fragment)), spelling.what).not.toEqual([]);
  });

  it("does not take a docflow id's digits for a number, and finds the number beside one", () => {
    const passport = SPELLINGS.find((s) => s.fragment === '65 12 № 479876')!;
    expect(leftOf(passport, 'docflow 0b7c2f5e-1d2a-4c3b-6512-a1b2c3d4e5f6 queued')).toEqual([]);
    expect(leftOf(passport, 'docflow 0b7c2f5e-1d2a-4c3b-9e8f-a1b2c3d4e5f6: паспорт 65 12 № 479876')).toEqual(['479876', '6512']);
  });

  it.each(SPELLINGS)('masks $what ($fragment) with the deal at hand', (spelling) => {
    const masked = maskPersonalData(registryText(spelling.fragment), deal, profile);
    expect(leftOf(spelling, masked)).toEqual([]);
    expect(masked).toMatch(/^отказ: в сведениях о заявителе .*\*\*\*.* есть расхождение$/);
  });

  it.each(SPELLINGS)('masks $what ($fragment) with the filter alone', (spelling) => {
    const names = filterMatcher(personFilter(personsOf(deal, profile)));
    const masked = maskRegistryText(registryText(spelling.fragment), names);
    expect(leftOf(spelling, masked)).toEqual([]);
    expect(masked).toMatch(/^отказ: в сведениях о заявителе .*\*\*\*.* есть расхождение$/);
  });
});

describe('name keys', () => {
  it('are one for a name in Cyrillic, in its transliterations and declined', () => {
    const key = nameKey('Семёнов');
    for (const word of ['СЕМЕНОВ', 'Semyonov', 'Semjonov', 'SEMENOV', 'Семёновой', 'Семёновым', 'Ceмёнов'])
      expect(keysOfWord(word)).toContain(key);
    expect(keysOfWord('Ивану')).toContain(nameKey('Иван'));
    expect(keysOfWord('Yan')).toContain(nameKey('Ян'));
    expect(keysOfWord('Kuznetsov')).toContain(nameKey('Кузнецов'));
    expect(keysOfWord('Khrushchev')).toContain(nameKey('Хрущёв'));
    expect(keysOfWord('договор')).not.toContain(key);
  });
});

describe('masking names', () => {
  const names = exactMatcher([{ surname: 'Семёнов', name: 'Андрей', patronymic: 'Петрович' }])!;

  it('leaves a text without the names as it was', () => {
    const text = 'Управление Росреестра: объект 54:35:012345:101, заявление № 5 от 12.03.2026, в отношении договора ипотеки';
    expect(maskNames(text, names)).toBe(text);
  });

  it('masks initials beside a name, not a one-letter word', () => {
    expect(maskNames('Семёнов А.П. и Петров', names)).toBe('*** ***.***. и Петров');
    expect(maskNames('в Семёнове и в доме', names)).toBe('в *** и в доме');
  });

  it('keeps no name in a filter: a few bytes of hashes', () => {
    const filter = personFilter([{ surname: 'Семёнов', name: 'Андрей', patronymic: 'Петрович' }]);
    expect(filter).toMatch(/^1[A-Za-z0-9_-]{1,8}$/);
    expect(filterMatcher(filter)!.isName(nameKey('Семёнова')!)).toBe(true);
    expect(filterMatcher('')).toBeUndefined();
  });

  it('reads digits of any script, and drops invisible characters', () => {
    expect(normalizeText('１２３ ٣٤ 𝟓 Се\u200bмё\u00adнов № 1')).toBe('123 34 5 Семёнов № 1');
  });
});
