/**
 * What a bank clerk should do with a row that needs a person, in a sentence, in
 * Russian or English (`--lang`). The input's column names, commands and batch ids
 * stay as they are in both: the clerk types them. Our own errors column is named as the
 * file's header names it (`errors`, or «Ошибки» in a Russian file).
 */
import type { Lang } from '../config.js';
import { DEFAULT_KIND, KINDS } from '../docflows/registry.js';
import { ERROR_CODES } from '../outcomes/error-codes.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import { OWN_COLUMN_HEADERS_RU } from '../input/own-columns.js';

/** The Russian attention file's errors column, as its header names it. */
const ERRORS = `«${OWN_COLUMN_HEADERS_RU.errors}»`;

export function hintFor(record: OutcomeRecord, batch: string, lang: Lang = 'en'): string {
  return lang === 'ru' ? russianHint(record, batch) : englishHint(record, batch);
}

/** The row a DUPLICATE_ROW repeats, as its errorMessage names it ("dealId: repeats row 2: ..."). */
function repeatedRow(record: OutcomeRecord): string {
  return /repeats row (\d+)/.exec(record.errorMessage ?? '')?.[1] ?? '?';
}

function englishHint(record: OutcomeRecord, batch: string): string {
  const numbers = record.candidates?.join(', ');
  switch (record.outcome) {
    case 'invalid':
      // Loaded again unchanged, a dealId another property has can never be sent: the hint must not say "correct the fields".
      if (record.errorCode === ERROR_CODES.DEAL_ID_CONFLICT.code)
        return "this dealId is another property's (see errors): give this deal its own dealId, correct any other field named in errors, then load this file again";
      if (record.errorCode === ERROR_CODES.DUPLICATE_ROW.code)
        return `this row duplicates row ${repeatedRow(record)} (the same deal for the same property), which carries the deal: remove this row`;
      if (record.errorCode === ERROR_CODES.DOCUMENT_CHANGED.code)
        return `a file named in errors changed on disk after the load, so nothing was sent: check it is the right file, then load this file again (or run: realty-batch retry ${batch} --outcome invalid --force)`;
      return 'correct the fields named in errors, then load this file again';
    case 'not_found':
      return numbers
        ? `the register has no object at exactly this address (nearest: ${numbers}); correct the address, or put the right cadastral number in cadastralNumber`
        : 'the register has no object at this address; correct the address, or put the cadastral number in cadastralNumber';
    case 'ambiguous':
      return `put one of ${numbers ?? 'the cadastral numbers in errors'} in cadastralNumber`;
    case 'rejected':
      return 'the registry refused the request; correct what errors names, then load this file again';
    case 'forbidden':
      return (
        "the bank's account may not submit this deal; ask the registry administrator for access, then run: realty-batch retry " +
        `${batch} --outcome forbidden --force`
      );
    case 'unavailable':
      return `the state register did not answer (501); run later: realty-batch retry ${batch}`;
    case 'failed':
      if (record.errorCode === 'ERR_UNCERTAIN') {
        return `its last try may have created a docflow: do not submit it by hand before checking the gateway; realty-batch retry ${batch} looks for it in the news feed first`;
      }
      return `the gateway failed after ${record.attempts} tries; run later: realty-batch retry ${batch}`;
    default:
      return '';
  }
}

/** "после 1 попытки", "после 3 попыток", "после 21 попытки". */
function attemptsRu(n: number): string {
  return `${n} ${n % 10 === 1 && n % 100 !== 11 ? 'попытки' : 'попыток'}`;
}

function russianHint(record: OutcomeRecord, batch: string): string {
  const numbers = record.candidates?.join(', ');
  switch (record.outcome) {
    case 'invalid':
      if (record.errorCode === ERROR_CODES.DEAL_ID_CONFLICT.code)
        return `этот dealId принадлежит другому объекту (см. колонку ${ERRORS}): присвойте сделке собственный dealId, исправьте остальные поля, указанные в колонке ${ERRORS}, и загрузите этот файл снова`;
      if (record.errorCode === ERROR_CODES.DUPLICATE_ROW.code)
        return `эта строка повторяет строку ${repeatedRow(record)} (та же сделка по тому же объекту), по которой сделка и подаётся: удалите эту строку`;
      if (record.errorCode === ERROR_CODES.DOCUMENT_CHANGED.code)
        return `файл, указанный в колонке ${ERRORS}, изменился на диске после загрузки, поэтому ничего не отправлено: проверьте, что это нужный файл, и загрузите этот файл снова (или выполните: realty-batch retry ${batch} --outcome invalid --force)`;
      return `исправьте поля, указанные в колонке ${ERRORS}, и загрузите этот файл снова`;
    case 'not_found':
      return numbers
        ? `в реестре нет объекта точно по этому адресу (ближайшие: ${numbers}); исправьте адрес или укажите верный кадастровый номер в колонке cadastralNumber`
        : 'в реестре нет объекта по этому адресу; исправьте адрес или укажите кадастровый номер в колонке cadastralNumber';
    case 'ambiguous':
      return numbers
        ? `укажите в колонке cadastralNumber один из кадастровых номеров: ${numbers}`
        : `укажите в колонке cadastralNumber один из кадастровых номеров, перечисленных в колонке ${ERRORS}`;
    case 'rejected':
      return `реестр отклонил запрос; исправьте то, что указано в колонке ${ERRORS}, и загрузите этот файл снова`;
    case 'forbidden':
      return (
        'учётной записи банка не разрешено подавать эту сделку; запросите доступ у администратора реестра, затем выполните: realty-batch retry ' +
        `${batch} --outcome forbidden --force`
      );
    case 'unavailable':
      return `государственный реестр не ответил (501); повторите позже: realty-batch retry ${batch}`;
    case 'failed':
      if (record.errorCode === 'ERR_UNCERTAIN') {
        return `последняя попытка могла создать документооборот: не подавайте сделку вручную, не проверив шлюз; realty-batch retry ${batch} сначала ищет его в ленте новостей шлюза`;
      }
      return `запрос к шлюзу не удался после ${attemptsRu(record.attempts)}; повторите позже: realty-batch retry ${batch}`;
    default:
      return '';
  }
}

/** A row whose deal has two docflows at the gateway (DUPLICATE_DOCFLOW): one must be cancelled there. */
export function duplicateHintFor(record: OutcomeRecord, lang: Lang = 'en'): string {
  const [kept, other] = [record.docflowId ?? '', record.otherDocflowId ?? ''];
  return lang === 'ru'
    ? `у сделки два документооборота в шлюзе (${kept} и ${other}): отзовите один из них в шлюзе; не загружайте эту строку снова, ничего не будет отправлено повторно`
    : `the deal has two docflows at the gateway (${kept} and ${other}): cancel one of them at the gateway; do not load this row again, nothing would be sent`;
}

/**
 * What the bank does for a docflow that waits for it or that the registry refused
 * (docs/operations.md, "The life of a deal"). Loading the row again sends nothing: the ledger holds its docflow.
 */
export function stateHintFor(record: OutcomeRecord, batch: string, lang: Lang = 'en'): string {
  const docflow = record.docflowId ?? '';
  const payment = [record.paymentUin && `uin ${record.paymentUin}`, record.paymentAmount && `${record.paymentAmount} ₽`]
    .filter(Boolean)
    .join(', ');
  // What the registry refused, by the row's docflow type (its module says), and the flags that file its row again.
  const kind = KINDS.find((k) => k.type === record.type) ?? DEFAULT_KIND;
  const refused = kind.refused;
  if (lang === 'ru') {
    if (record.state === 'error')
      return `реестр отказал ${refused.ru} (колонка ${ERRORS}); исправьте сделку и загрузите этот файл снова с ${refused.flags}`;
    if (record.requirement === 'payment')
      return `реестр ждёт оплаты госпошлины (${payment}); список платежей: realty-batch payments ${batch} --out payments.csv; после оплаты сделка пойдёт дальше сама`;
    if (record.requirement === 'signature')
      return `заявители должны подписать файлы заявления документооборота ${docflow}, затем его нужно отправить; до этого регистрация не начнётся; файлы: realty-batch to-sign ${batch} --dir to-sign, подписи обратно: realty-batch sign ${batch} --dir to-sign`;
    return '';
  }
  if (record.state === 'error')
    return kind === DEFAULT_KIND
      ? 'the registry refused the registration (errors); correct the deal, then load this file again with --resubmit'
      : `the registry refused the ${refused.en} (errors); correct the row, then load this file again with ${refused.flags}`;
  if (record.requirement === 'payment')
    return `the registry waits for the state duty (${payment}); the list: realty-batch payments ${batch} --out payments.csv; once paid the deal moves on by itself`;
  if (record.requirement === 'signature')
    return `the applicants must sign the application files of docflow ${docflow}, then it must be sent; registration does not start before; the files: realty-batch to-sign ${batch} --dir to-sign, the signatures back: realty-batch sign ${batch} --dir to-sign`;
  return '';
}
