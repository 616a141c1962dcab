/**
 * The words of the files for a Russian reader (`--lang ru`, issue 40 point 6): every outcome,
 * docflow state, requirement, column and error code of ours has a Russian name, none left in
 * English, none two things at once, and a file written so reads back as its codes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OWN_COLUMNS } from '../../src/input/mapping.js';
import { MESSAGES } from '../../src/input/field-checks.js';
import { OWN_COLUMN_HEADERS_RU } from '../../src/input/own-columns.js';
import { formatProblemsRu, translateProblem, translateProblems } from '../../src/input/problems-ru.js';
import { ERROR_CODES } from '../../src/outcomes/error-codes.js';
import { DOCFLOW_STATES, OUTCOMES, RESULTS_FILE_COLUMNS, type OutcomeRecord } from '../../src/domain/outcome.js';
import { PAYMENT_COLUMNS } from '../../src/results/payments.js';
import {
  codesOfColumn,
  columnHeaders,
  columnOfHeader,
  COLUMN_HEADERS_RU,
  ERROR_DESCRIPTIONS_RU,
  errorTextRu,
  OUTCOME_NAMES_RU,
  REQUIREMENT_NAMES_RU,
  russianCells,
  STATE_NAMES_RU,
} from '../../src/results/russian.js';
import { ROOT } from '../helpers/cli.js';

/** Russian words, with at most the abbreviations a clerk reads as Russian (ID, HTTP, УИН). */
const RUSSIAN = /^[А-ЯЁа-яё№ ,;.\-()«»]+$/;
const distinct = (names: readonly string[]): boolean => new Set(names.map((n) => n.toLowerCase())).size === names.length;

const record = (extra: Partial<OutcomeRecord>): OutcomeRecord => ({
  row: 1,
  dealId: 'D-1',
  outcome: 'queued',
  attempts: 1,
  finishedAt: '2026-11-24T00:00:00.000Z',
  ...extra,
});

describe('the Russian names', () => {
  it('name every outcome, docflow state and requirement in Russian words only, each once', () => {
    for (const [table, codes] of [
      [OUTCOME_NAMES_RU, OUTCOMES],
      [STATE_NAMES_RU, DOCFLOW_STATES],
      [REQUIREMENT_NAMES_RU, ['signature', 'payment']],
    ] as const) {
      expect(Object.keys(table).sort()).toEqual([...codes].sort());
      for (const name of Object.values(table)) expect(name).toMatch(RUSSIAN);
      expect(distinct(Object.values(table))).toBe(true);
    }
    expect(OUTCOME_NAMES_RU.queued).toBe('принят');
  });

  it("head every column of the results and payments files in Russian, each once, row and outcome as the attention file's", () => {
    const results = columnHeaders(RESULTS_FILE_COLUMNS, 'ru');
    const payments = columnHeaders(PAYMENT_COLUMNS, 'ru');
    for (const header of [...results, ...payments]) expect(header.replace(/\b(ID|HTTP)\b/g, '')).toMatch(RUSSIAN);
    expect(distinct(results)).toBe(true);
    expect(distinct(payments)).toBe(true);
    expect(results.slice(0, 3)).toEqual([OWN_COLUMN_HEADERS_RU.row, 'ID сделки', OWN_COLUMN_HEADERS_RU.outcome]);
    // English keeps the names, as the contract has them.
    expect(columnHeaders(RESULTS_FILE_COLUMNS, 'en')).toEqual([...RESULTS_FILE_COLUMNS]);
    expect(columnHeaders(RESULTS_FILE_COLUMNS, undefined)).toEqual([...RESULTS_FILE_COLUMNS]);
  });

  it('give every error code of ours a Russian phrase', () => {
    const ours = Object.values(ERROR_CODES)
      .map((entry) => entry.code)
      .filter((code) => !code.includes('<'));
    expect(Object.keys(ERROR_DESCRIPTIONS_RU).sort()).toEqual(ours.sort());
    for (const phrase of Object.values(ERROR_DESCRIPTIONS_RU)) expect(phrase.replace(/\bdealId\b/, '')).toMatch(RUSSIAN);
  });

  it('are the ones docs/excel.md lists', () => {
    const doc = readFileSync(join(ROOT, 'docs/excel.md'), 'utf8');
    for (const [column, header] of Object.entries(COLUMN_HEADERS_RU))
      expect(doc).toMatch(new RegExp(`\\| \`${column}\`[^|]*\\| ${header} +\\|`));
    for (const [outcome, name] of Object.entries(OUTCOME_NAMES_RU)) expect(doc).toMatch(new RegExp(`\\| \`${outcome}\` +\\| ${name} +\\|`));
  });

  it('read back as the codes: headers, outcome, state and requirement names, in any case', () => {
    for (const column of [...RESULTS_FILE_COLUMNS, ...PAYMENT_COLUMNS]) {
      expect(columnOfHeader(columnHeaders([column], 'ru')[0]!)).toBe(column);
      expect(columnOfHeader(column)).toBe(column);
    }
    for (const outcome of OUTCOMES) expect(codesOfColumn('outcome')!.get(OUTCOME_NAMES_RU[outcome])).toBe(outcome);
    for (const state of DOCFLOW_STATES) expect(codesOfColumn('state')!.get(STATE_NAMES_RU[state])).toBe(state);
    expect(codesOfColumn('requirement')!.get('оплата госпошлины')).toBe('payment');
    expect(columnOfHeader(' id СДЕЛКИ ')).toBe('dealId');
    expect(codesOfColumn('dealId')).toBeUndefined();
  });

  it("are known to the loader as columns of ours: a Russian attention or rejects file's own columns are ignored", () => {
    for (const [name, russian] of Object.entries(OWN_COLUMN_HEADERS_RU)) {
      expect(OWN_COLUMNS.has(name)).toBe(true);
      expect(OWN_COLUMNS.has(russian.toLowerCase())).toBe(true);
    }
    expect(COLUMN_HEADERS_RU.errorMessage).not.toBe(OWN_COLUMN_HEADERS_RU.errors);
  });
});

describe('the error cell in Russian', () => {
  it("puts the code's phrase before our message, the loader's problems in Russian", () => {
    const invalid = record({
      outcome: 'invalid',
      errorCode: 'INVALID',
      errorMessage: 'dealId: is required; ownerSnils: checksum does not match',
    });
    expect(errorTextRu(invalid)).toBe(
      'строка не прошла проверку и не отправлялась — dealId: обязательное поле, не заполнено; ownerSnils: не сходится контрольное число',
    );
    const repeated = record({
      outcome: 'invalid',
      errorCode: 'DUPLICATE_ROW',
      errorMessage: 'dealId: repeats row 2: the same dealId for the same property',
    });
    expect(errorTextRu(repeated)).toBe(
      'строка повторяет более раннюю строку файла — dealId: повторяет строку 2: тот же dealId для того же объекта',
    );
  });

  it("keeps the gateway's message as it came, after a phrase for what the outcome says", () => {
    expect(
      errorTextRu(record({ outcome: 'rejected', errorCode: 'validation', httpStatus: 400, errorMessage: 'Invalid cadastral number' })),
    ).toBe('шлюз отклонил запрос — Invalid cadastral number');
    expect(errorTextRu(record({ outcome: 'forbidden', errorCode: 'HTTP_403', httpStatus: 403 }))).toBe(
      'шлюз не разрешает это учётной записи банка',
    );
    expect(errorTextRu(record({ outcome: 'failed', errorCode: 'ECONNRESET', errorMessage: 'socket hang up' }))).toBe(
      'шлюз не ответил ни на одну попытку (сеть) — socket hang up',
    );
  });

  it('says what a row without a code means when its outcome needs it, and nothing for a plain success', () => {
    const before = 'submitted before (batch night, row 2, queued, 2026-11-24T00:00:00.000Z)';
    expect(errorTextRu(record({ outcome: 'already_submitted', errorMessage: before }))).toBe(
      `сделка подана ранее, повторно не отправлялась — ${before}`,
    );
    expect(errorTextRu(record({ outcome: 'queued' }))).toBe('');
  });

  it('gives a results line Russian names, keeps ids and unknown states as they are, and leaves the record untouched', () => {
    const line = record({
      outcome: 'suspended',
      docflowId: '0042',
      state: 'suspended',
      requirement: 'payment',
      paymentUin: '32127602237600012345',
    });
    expect(russianCells(line)).toMatchObject({
      outcome: 'принят, ждёт действий банка',
      state: 'ждёт действий банка',
      requirement: 'оплата госпошлины',
      docflowId: '0042',
      paymentUin: '32127602237600012345',
    });
    expect(russianCells(record({ state: 'archived' })).state).toBe('archived');
    expect(line.outcome).toBe('suspended');
  });
});

describe("the loader's problems in Russian", () => {
  it("translates every shared message, and each of the loader's own", () => {
    const messages = [
      ...Object.values(MESSAGES),
      'must be male or female (or м/ж, M/F)',
      'must be a cadastral number AA:BB:CCCCCC[C]:N',
      'must be a positive decimal number (45.6 or 45,6)',
      'must be NNN-NNN or NNNNNN',
      'must be 4 digits for a russPassport series',
      'must be at most 500 characters',
      'must contain only printable characters',
      'must be a number',
      'must be a flat or premises number (33, кв. 33)',
      'is required: ownerFiasId, or ownerRegion and ownerHouse',
      'is required without fiasId',
      'is required with agreementSignatureFiles',
      'must not be before ownerBirthDate',
      'names a корпус (building) other than building',
      'names a type (кв, ком, пом, бокс) other than apartmentType',
      'repeats the dealId of row 3, which is for another property',
      'has 4 cells where the header has 30',
      'is "Квартирка", not one of the accepted values: flat (квартира, кв)',
      'names no file (it does not exist or cannot be reached)',
      'file 2 is over 1 MiB, more than a detached signature holds',
      'has a third part that names no level it knows (a type word: обл., г., ул., д.)',
      'names the house number twice',
      'names no house (д. 5)',
    ];
    for (const message of messages) {
      const russian = translateProblem(message);
      expect(russian, message).not.toBe(message);
      expect(russian, message).toMatch(/^[^a-z]*[а-яё]/i);
    }
    expect(translateProblem('is "Квартирка", not one of the accepted values: flat (квартира, кв)')).toBe(
      '«Квартирка» — не из допустимых значений: flat (квартира, кв)',
    );
  });

  it('keeps a message it does not know as it came', () => {
    expect(translateProblem('a message added later')).toBe('a message added later');
    expect(
      formatProblemsRu([
        { field: 'dealId', message: 'is required' },
        { field: 'x', message: 'something new' },
      ]),
    ).toBe('dealId: обязательное поле, не заполнено; x: something new');
  });

  it('cuts a stored list only before the next field, so a message holding "; " stays whole', () => {
    expect(
      translateProblems('ownerSnils: must be text: a number this long loses digits in JSON; put it in quotes; objectType: is required'),
    ).toBe(
      'ownerSnils: должно быть текстом: такое длинное число в JSON теряет цифры; заключите его в кавычки; objectType: обязательное поле, не заполнено',
    );
  });
});
