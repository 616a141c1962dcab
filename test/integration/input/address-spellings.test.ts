import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { describe, expect } from 'vitest';
import { runBatch, type RunResult } from '../../../src/pipeline/run-batch.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { parseMapping } from '../../../src/input/mapping.js';
import { createLogger } from '../../../src/logger.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';

const SESSION = 'address-spellings-session';
/** The samples' address-only rows, as a bank's system spells their addresses (samples/registry.json holds each once). */
const SPELLED: Record<string, Record<string, string>> = {
  'NSK-2026-000123': { region: 'Новосибирская обл.', city: 'г. Новосибирск', street: 'ул. Челюскинцев', house: 'д. 14' },
  'KZN-2026-000051': { region: 'Респ. Татарстан', city: 'г.Казань', street: 'Чистопольская ул.' },
  // A settlement in the city column: the register files Краснообск as a settlement of the district.
  'NSK-2026-000128': {
    region: 'Новосибирская обл',
    district: 'Новосибирский р-н',
    city: 'рп. Краснообск',
    settlement: '',
    street: 'ул Центральная',
  },
  'MSK-2026-004512': { region: 'г. Москва', city: 'Москва', street: 'Хорошёвское шоссе', streetType: '' },
};
/** One combined address cell, the separate columns left empty. */
const COMBINED = 'EKB-2026-000311';
const ADDRESS_COLUMNS = ['region', 'district', 'city', 'settlement', 'street', 'streetType', 'house', 'building', 'structure', 'apartment'];

/** The samples' header with a bank's own names for two columns, and its combined address column last. */
const BANK_HEADER = [...HEADER.map((h) => (h === 'objectType' ? 'Вид объекта' : h === 'ownerGender' ? 'Пол' : h)), 'Адрес'];

function bankRow(dealId: string, fields: Record<string, string>, address = ''): string[] {
  const row = [...ROWS.find((r) => r[0] === dealId)!];
  for (const [field, value] of Object.entries(fields)) row[HEADER.indexOf(field)] = value;
  return [...row, address];
}

const it = harness({ per: 'file', label: 'address-spellings', sandbox: { sessions: [SESSION] }, redis: { maxRetriesPerRequest: null } });

describe('addresses and values as people write them, through run against the sandbox’s registry', () => {
  let sandbox: RunningSandbox;
  let result: RunResult;
  let rows: Array<Record<string, string>>;
  const outcome = (dealId: string) => rows.find((r) => r.dealId === dealId)!;

  it.beforeAll(async ({ sandbox: started, redis, keys, db: own, dir, profile }) => {
    sandbox = started;
    const file = join(dir, 'night.csv');
    const combined = Object.fromEntries(ADDRESS_COLUMNS.map((c) => [c, '']));
    await writeFile(
      file,
      csvText(
        [
          ...Object.entries(SPELLED).map(([dealId, fields]) => bankRow(dealId, { ...fields, objectType: 'Квартира', ownerGender: 'жен.' })),
          bankRow(
            COMBINED,
            { ...combined, objectType: 'Жилое помещение', ownerGender: 'Мужской' },
            '620014, Свердловская обл., г. Екатеринбург, ул. Малышева, д. 120, кв. 33',
          ),
        ],
        { header: BANK_HEADER },
      ),
    );
    const mapping = parseMapping(
      {
        columns: { 'Вид объекта': 'objectType', Пол: 'ownerGender' },
        address: 'Адрес',
        values: { objectType: { 'Жилое помещение': 'flat' } },
      },
      'map.json',
    );
    result = await runBatch({
      file,
      reading: { mapping },
      profile: await profile.load(),
      batch: 'night',
      redis,
      keys,
      db: own.db,
      logger: createLogger({ level: 'silent', destination: new PassThrough() }),
      apiUrl: sandbox.url,
      sessionId: SESSION,
      processor: createDealProcessor,
      worker: { concurrency: 4, attempts: 2, backoffMs: 50, timeoutMs: 2000 },
      waiting: { pollMs: 20 },
      output: { out: join(dir, 'night.results.csv'), rejects: join(dir, 'night.rejects.csv') },
    });
    rows = parse(readFileSync(join(dir, 'night.results.csv')), { columns: true }) as Array<Record<string, string>>;
  });

  it('finds every address-only deal through suggest and queues it, none not_found', () => {
    expect(result.load).toMatchObject({ read: 5, invalid: 0, unknownColumns: [] });
    for (const dealId of [...Object.keys(SPELLED), COMBINED]) expect(outcome(dealId), dealId).toMatchObject({ outcome: 'queued' });
    expect(outcome(COMBINED).cadastralNumber).toBe('66:41:0702050:4433');
  });

  it('sends each street as its name and its own abbreviation, never "ул ул. Ленина", and Хорошёвское as a шоссе', () => {
    const streets = sandbox
      .docflows()
      .map((d) => (d.object as { address: { street?: { name: string; abbreviation: string } } }).address.street)
      .sort((a, b) => (a?.name ?? '').localeCompare(b?.name ?? ''));
    expect(streets).toEqual([
      { name: 'Малышева', abbreviation: 'ул' },
      { name: 'Хорошёвское', abbreviation: 'ш' },
      { name: 'Центральная', abbreviation: 'ул' },
      { name: 'Челюскинцев', abbreviation: 'ул' },
      { name: 'Чистопольская', abbreviation: 'ул' },
    ]);
  });
});
