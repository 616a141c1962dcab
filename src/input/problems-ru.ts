/**
 * The loader's problem messages (`field: message`, the rejects file's errors and an invalid
 * row's errorMessage) in Russian, for the files a person reads under `--lang ru`. A message
 * this table does not know stays as it came: a new English message is never lost, only left
 * untranslated. Field names, column names and values stay as they are: the clerk looks for them.
 */
import type { FieldProblem } from '../domain/deal.js';

/** English message → Russian; a function gets the pattern's groups. */
type Rule = readonly [RegExp, string | ((...groups: string[]) => string)];

const ORDINALS_RU: Readonly<Record<string, string>> = {
  first: 'первая',
  second: 'вторая',
  third: 'третья',
  fourth: 'четвёртая',
  fifth: 'пятая',
  sixth: 'шестая',
  seventh: 'седьмая',
  eighth: 'восьмая',
  ninth: 'девятая',
  tenth: 'десятая',
};

const TWICE_RU: Readonly<Record<string, string>> = { 'house number': 'номер дома', street: 'улицу', region: 'регион', city: 'город' };

const RULES: readonly Rule[] = [
  [/^is required$/, 'обязательное поле, не заполнено'],
  [/^must be a real date \(YYYY-MM-DD or DD\.MM\.YYYY\)$/, 'должно быть настоящей датой (ГГГГ-ММ-ДД или ДД.ММ.ГГГГ)'],
  [/^must not be before 1900-01-01$/, 'не может быть раньше 01.01.1900'],
  [/^must not be in the future$/, 'не может быть в будущем'],
  [/^must be 11 digits \(separators - and space allowed\)$/, 'должно содержать 11 цифр (допустимы разделители - и пробел)'],
  [/^checksum does not match$/, 'не сходится контрольное число'],
  [/^must be a UUID$/, 'должно быть UUID'],
  [/^must be UUIDs separated by \|, comma or space$/, 'должно быть списком UUID через |, запятую или пробел'],
  [/^must be male or female \(or м\/ж, M\/F\)$/, 'должно быть male или female (или м/ж, M/F)'],
  [/^must be a cadastral number (\S+)$/, (format) => `должно быть кадастровым номером вида ${format}`],
  [/^must be a positive decimal number \((.+)\)$/, (examples) => `должно быть положительным числом (${examples.replace(' or ', ' или ')})`],
  [/^must be NNN-NNN or NNNNNN$/, 'должно иметь вид NNN-NNN или NNNNNN'],
  [
    /^must be (\d+) digits for a russPassport (series|number)$/,
    (count, part) => `должно содержать ${count} цифр${part === 'series' ? ' серии' : ' номера'} паспорта РФ (russPassport)`,
  ],
  [/^must be at most (\d+) characters$/, (n) => `должно быть не длиннее ${n} символов`],
  [/^must contain only printable characters$/, 'должно содержать только печатные символы'],
  [/^must be file paths separated by \|$/, 'должно быть списком путей к файлам через |'],
  [/^must be a number$/, 'должно быть числом'],
  [/^must be a flat or premises number \((.+)\)$/, (examples) => `должно быть номером квартиры или помещения (${examples})`],
  [/^must be 10 digits$/, 'должно содержать 10 цифр'],
  [/^must not be before (\w+)$/, (field) => `не может быть раньше ${field}`],
  [/^is required: (\w+), or (\w+) and (\w+)$/, (a, b, c) => `обязательно: ${a} или ${b} и ${c}`],
  [/^is required without (\w+)$/, (field) => `обязательно, когда не указан ${field}`],
  [/^is required with (\w+)$/, (field) => `обязательно, когда указан ${field}`],
  [/^names a street type other than (\w+)$/, (field) => `называет тип улицы, отличный от ${field}`],
  [/^names a (корпус|строение) \((\w+)\) other than (\w+)$/, (word, _part, field) => `называет ${word}, отличный от колонки ${field}`],
  [/^names a type \((.+)\) other than (\w+)$/, (types, field) => `называет тип (${types}), отличный от ${field}`],
  [
    /^must be empty when agreementFile is given: a row names content ids or files, not both$/,
    'должно быть пустым, когда указан agreementFile: строка называет либо идентификаторы, либо файлы, но не то и другое',
  ],
  [/^repeats row (\d+): the same dealId for the same property$/, (row) => `повторяет строку ${row}: тот же dealId для того же объекта`],
  [
    /^repeats the dealId of row (\d+), which is for another property$/,
    (row) => `повторяет dealId строки ${row}, где он указан для другого объекта`,
  ],
  [/^repeats the dealId of row (\d+)$/, (row) => `повторяет dealId строки ${row}`],
  [/^has (\d+) cells? where the header has (\d+)$/, (cells, header) => `ячеек в строке ${cells}, а в заголовке ${header}`],
  [/^is not an object$/, 'не является объектом JSON'],
  [/^must be text, not an array$/, 'должно быть текстом, а не массивом'],
  [/^must be text, not an object$/, 'должно быть текстом, а не объектом'],
  [
    /^must be text: a number this long loses digits in JSON; put it in quotes$/,
    'должно быть текстом: такое длинное число в JSON теряет цифры; заключите его в кавычки',
  ],
  [/^(is "[^"]*", |is )not one of the accepted values: (.+)$/s, (is, accepted) => `${valueOf(is)}не из допустимых значений: ${accepted}`],
  [/^is an absolute path: allowed only with --files-root$/, 'абсолютный путь: допустим только с --files-root'],
  [/^names no file \(it does not exist or cannot be reached\)$/, 'называет файл, которого нет (или он недоступен)'],
  [
    /^leads out of the input's folder and of --files-root \(a link or \.\.\)$/,
    'ведёт за пределы папки файла и --files-root (ссылка или ..)',
  ],
  [
    /^leads out of the input's folder \(a link or \.\.\); --files-root allows another folder$/,
    'ведёт за пределы папки файла (ссылка или ..); другую папку разрешает --files-root',
  ],
  [/^cannot be read \(the disk did not answer in time\)$/, 'не читается (диск не ответил вовремя)'],
  [/^cannot be read$/, 'не читается'],
  [/^is not a regular file$/, 'не обычный файл'],
  [/^is empty$/, 'пустой'],
  [/^is over 50 MB, the most the gateway takes$/, 'больше 50 МБ, а шлюз принимает не больше'],
  [/^is neither a PDF \(%PDF-\) nor XML$/, 'не PDF (%PDF-) и не XML'],
  [/^is over 1 MiB, more than a detached signature holds$/, 'больше 1 МиБ, открепленная подпись столько не занимает'],
  [/^changed while the load read it$/, 'изменился, пока загрузка его читала'],
  [/^is not a detached signature \(.*\)$/, 'не открепленная подпись (ни CMS/PKCS#7 SignedData в DER или PEM, ни подпись OpenPGP)'],
  [
    /^is a CMS signature that holds the signed content itself \(attached\), not a detached one$/,
    'присоединённая подпись CMS (содержит сам подписанный файл), а нужна открепленная',
  ],
  [/^file (\d+) (.+)$/s, (n, rest) => `файл ${n}: ${translateProblem(rest)}`],
  [
    /^has a (\w+) part that names no level it knows( \(a type word: (.+)\))?$/,
    (nth, _whole, words) =>
      `${ORDINALS_RU[nth] ?? nth} часть не называет ни один уровень адреса${words ? ` (нужно слово типа: ${words})` : ''}`,
  ],
  [/^names the (house number|street|region|city|\w+) twice$/, (what) => `называет ${TWICE_RU[what] ?? what} дважды`],
  [/^names no region$/, 'не называет регион'],
  [/^names no house \((.+)\)$/, (example) => `не называет дом (${example})`],
  [/^must start with the house number$/, 'должно начинаться с номера дома'],
];

/** `is "Квартирка", ` → `«Квартирка» — `; `is ` → nothing. */
function valueOf(is: string): string {
  const quoted = /^is "([^"]*)", $/.exec(is);
  return quoted ? `«${quoted[1]}» — ` : '';
}

/** One problem message in Russian, or as it came when the table does not know it. */
export function translateProblem(message: string): string {
  for (const [pattern, russian] of RULES) {
    const m = pattern.exec(message);
    if (m) return typeof russian === 'string' ? russian : russian(...m.slice(1).map((g) => g ?? ''));
  }
  return message;
}

/** `field: message; ...` with each message in Russian (rejects.ts formatProblems's form). */
export function formatProblemsRu(problems: readonly FieldProblem[]): string {
  return problems.map((p) => `${p.field}: ${translateProblem(p.message)}`).join('; ');
}

/**
 * A stored `field: message; ...` (an invalid row's errorMessage) with each message in Russian.
 * A part is cut only where `; ` comes before the next `field: `, so a message holding `; ` stays whole.
 */
export function translateProblems(text: string): string {
  return text
    .split(/; (?=[\w()]+: )/)
    .map((part) => {
      const m = /^([\w()]+): (.*)$/s.exec(part);
      return m ? `${m[1]}: ${translateProblem(m[2]!)}` : part;
    })
    .join('; ');
}
