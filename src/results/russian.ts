/**
 * The words of the files a person reads, in Russian (`--lang ru`): the headers of the columns
 * the tool writes, the outcome, docflow state and requirement names, and a sentence for each
 * error code beside the message. One table, so that every file says the same thing the same
 * way, and so that a file written so can be read back (read-results.ts turns the headers and
 * names back into the codes). The plain results CSV and JSON Lines never use it: scripts and
 * the bank's import read their codes (docs/excel.md, "Files in Russian").
 */
import type { Lang } from '../config.js';
import { OWN_COLUMN_HEADERS_RU } from '../input/own-columns.js';
import { translateProblems } from '../input/problems-ru.js';
import { ERROR_CODES, type ErrorCode } from '../outcomes/error-codes.js';
import { type DocflowState, type Outcome, type OutcomeRecord, type Requirement, RESULTS_FILE_COLUMNS } from '../domain/outcome.js';

/** Plain words an operations clerk reads without the manual. */
export const OUTCOME_NAMES_RU: Readonly<Record<Outcome, string>> = {
  queued: 'принят',
  suspended: 'принят, ждёт действий банка',
  already_submitted: 'подан ранее',
  invalid: 'ошибка в данных',
  not_found: 'объект не найден',
  ambiguous: 'найдено несколько объектов',
  rejected: 'отклонён шлюзом',
  forbidden: 'нет доступа',
  unavailable: 'реестр недоступен',
  failed: 'сбой отправки',
  pending: 'не обработан',
};

export const STATE_NAMES_RU: Readonly<Record<DocflowState, string>> = {
  queued: 'в очереди на отправку',
  sent: 'отправлен в реестр',
  suspended: 'ждёт действий банка',
  completed: 'зарегистрирован',
  error: 'отказ реестра',
};

export const REQUIREMENT_NAMES_RU: Readonly<Record<Requirement, string>> = {
  signature: 'подпись заявителей',
  payment: 'оплата госпошлины',
};

/** The payments file's columns (payments.ts) that the results file has not. */
type PaymentOnlyColumn = 'uin' | 'amount' | 'payer' | 'since';
export type TranslatedColumn = (typeof RESULTS_FILE_COLUMNS)[number] | PaymentOnlyColumn;

/** The headers of the results and payments files; `row` and `outcome` as the attention file has them. */
export const COLUMN_HEADERS_RU: Readonly<Record<TranslatedColumn, string>> = {
  row: OWN_COLUMN_HEADERS_RU.row,
  dealId: 'ID сделки',
  outcome: OWN_COLUMN_HEADERS_RU.outcome,
  docflowId: 'ID документооборота',
  cadastralNumber: 'Кадастровый номер',
  httpStatus: 'HTTP-статус',
  attempts: 'Попыток',
  errorCode: 'Код ошибки',
  errorMessage: 'Описание ошибки',
  finishedAt: 'Завершено',
  state: 'Состояние в реестре',
  stateAt: 'Состояние на',
  requirement: 'Требование реестра',
  paymentUin: 'УИН платежа',
  paymentAmount: 'Сумма госпошлины',
  registryError: 'Ошибка реестра',
  requestId: 'ID запроса',
  type: 'Тип документооборота',
  otherDocflowId: 'Второй документооборот',
  uin: 'УИН',
  amount: 'Сумма, руб.',
  payer: 'Плательщик',
  since: 'Ждёт с',
};

/** What each code of ours means, in a phrase; the message beside it says the particulars. */
export const ERROR_DESCRIPTIONS_RU: Readonly<Record<ErrorCode, string>> = {
  INVALID: 'строка не прошла проверку и не отправлялась',
  DEAL_ID_CONFLICT: 'этот dealId уже принадлежит другому объекту; строка не отправлялась',
  DUPLICATE_ROW: 'строка повторяет более раннюю строку файла',
  DOCUMENT_CHANGED: 'файл документа изменился после загрузки; ничего не отправлено',
  NOT_FOUND: 'в реестре не найден объект по этому адресу',
  AMBIGUOUS: 'по этому адресу в реестре несколько объектов',
  ERR_UNCERTAIN: 'последняя попытка могла создать документооборот, шлюз этого пока не подтвердил',
  DUPLICATE_DOCFLOW: 'у сделки два документооборота в шлюзе',
  ERR_JOB_STALLED: 'обработчик строки слишком часто останавливался',
  ERR_JOB_FAILED: 'очередь завершила задание строки с ошибкой',
  ERR_DATA_REMOVED: 'данные строки ушли из очереди раньше, чем она была обработана',
  ERR_INTERNAL: 'внутренняя ошибка программы',
  ERR_API_RESPONSE: 'шлюз присылал ответ, который не соответствует его описанию',
};

/** A code of the gateway's own (or `HTTP_<status>`): what the outcome says happened; its message follows as it came. */
const GATEWAY_ERRORS_RU: Readonly<Partial<Record<Outcome, string>>> = {
  rejected: 'шлюз отклонил запрос',
  forbidden: 'шлюз не разрешает это учётной записи банка',
  unavailable: 'государственный реестр не ответил',
  failed: 'шлюз отвечал ошибкой на все попытки',
};

/** A row with no code: what its outcome means. */
const NO_CODE_RU: Readonly<Partial<Record<Outcome, string>>> = {
  already_submitted: 'сделка подана ранее, повторно не отправлялась',
  pending: 'строка ещё не обработана',
};

/** The codes whose message is the loader's `field: problem; ...`, which has Russian words (problems-ru.ts). */
const LOAD_CODES: ReadonlySet<string> = new Set([
  ERROR_CODES.INVALID.code,
  ERROR_CODES.DEAL_ID_CONFLICT.code,
  ERROR_CODES.DUPLICATE_ROW.code,
]);

const OWN_CODES: ReadonlySet<string> = new Set(Object.keys(ERROR_DESCRIPTIONS_RU));

/** The phrase for a row's error: its code's, else its outcome's; undefined for a row without one. */
export function errorDescriptionRu(record: Pick<OutcomeRecord, 'outcome' | 'errorCode' | 'httpStatus'>): string | undefined {
  const code = record.errorCode;
  if (!code) return NO_CODE_RU[record.outcome];
  if (OWN_CODES.has(code)) return ERROR_DESCRIPTIONS_RU[code as ErrorCode];
  // No status: no answer came at all, and the code is the network's reason (ECONNRESET, ...).
  if (record.httpStatus === undefined && record.outcome === 'failed') return 'шлюз не ответил ни на одну попытку (сеть)';
  return GATEWAY_ERRORS_RU[record.outcome] ?? 'ошибка шлюза';
}

/**
 * The error cell of a file for a Russian reader: the phrase, then ` — ` and the message (the
 * loader's problems in Russian; the gateway's and the registry's text as it came).
 */
export function errorTextRu(record: Pick<OutcomeRecord, 'outcome' | 'errorCode' | 'httpStatus' | 'errorMessage'>): string {
  const description = errorDescriptionRu(record);
  const raw = record.errorMessage ?? '';
  const message = record.errorCode && LOAD_CODES.has(record.errorCode) ? translateProblems(raw) : raw;
  return [description, message].filter((part) => part).join(' — ');
}

/** A name from a table, or the value as it came (a state the feed named that the table does not know). */
const nameIn = (table: Readonly<Record<string, string>>, value: string | undefined): string | undefined =>
  value === undefined ? undefined : Object.hasOwn(table, value) ? table[value] : value;

/** A results line's cells for a Russian reader: names for the outcome, state and requirement; the error's phrase beside its message. */
export function russianCells(record: OutcomeRecord): Readonly<Record<string, string | number | undefined>> {
  return {
    ...record,
    candidates: undefined,
    outcome: OUTCOME_NAMES_RU[record.outcome],
    state: nameIn(STATE_NAMES_RU, record.state),
    requirement: nameIn(REQUIREMENT_NAMES_RU, record.requirement),
    errorMessage: errorTextRu(record) || undefined,
  };
}

/** The headers of `columns` in `lang`: Russian names for Russian, the names themselves for English. */
export function columnHeaders(columns: readonly string[], lang: Lang | undefined): string[] {
  if (lang !== 'ru') return [...columns];
  return columns.map((c) => (Object.hasOwn(COLUMN_HEADERS_RU, c) ? COLUMN_HEADERS_RU[c as TranslatedColumn] : c));
}

/** Russian name → code, for reading a file written so back (read-results.ts). */
const reverse = (table: Readonly<Record<string, string>>): ReadonlyMap<string, string> =>
  new Map(Object.entries(table).map(([code, name]) => [name.toLowerCase(), code]));

const COLUMNS_BACK = reverse(COLUMN_HEADERS_RU);
const OUTCOMES_BACK = reverse(OUTCOME_NAMES_RU);
const STATES_BACK = reverse(STATE_NAMES_RU);
const REQUIREMENTS_BACK = reverse(REQUIREMENT_NAMES_RU);

/** A header as the tool's column name: a Russian one's code, else the header itself. */
export function columnOfHeader(header: string): string {
  return COLUMNS_BACK.get(header.trim().toLowerCase()) ?? header;
}

/**
 * For a column whose cells a Russian file writes as names (outcome, state, requirement): each
 * name, lower-cased, to its code; undefined for the others.
 */
export function codesOfColumn(column: string): ReadonlyMap<string, string> | undefined {
  return column === 'outcome' ? OUTCOMES_BACK : column === 'state' ? STATES_BACK : column === 'requirement' ? REQUIREMENTS_BACK : undefined;
}
