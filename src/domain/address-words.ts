/**
 * The words that name an address level's type (`ул.`, `пр-т`, `г.`, `пгт`, `обл.`), as people
 * write them, and the abbreviation the register files each under (`ул`, `пр-кт`, `г`, `пгт`).
 * One table for the loader (src/input/address-levels.ts) and the sandbox's matching: both may
 * import this file (it imports nothing). Words are lower-case with `е` for `ё`; a word may hold
 * dots and spaces (`р.п.`, `поселок городского типа`).
 */

/** Street types: the register's abbreviation → the words that name it. */
export const STREET_TYPE_WORDS: Readonly<Record<string, readonly string[]>> = {
  ул: ['ул', 'улица'],
  'пр-кт': ['пр-кт', 'пр-т', 'просп', 'проспект', 'пр'],
  ш: ['ш', 'шоссе'],
  пер: ['пер', 'переулок'],
  'б-р': ['б-р', 'бул', 'бульв', 'бульвар'],
  наб: ['наб', 'набережная'],
  пл: ['пл', 'площадь'],
  проезд: ['проезд', 'пр-д'],
  туп: ['туп', 'тупик'],
  мкр: ['мкр', 'мкрн', 'мкр-н', 'микрорайон'],
};

/** Settlement types: the register's abbreviation → the words that name it (`г` is a city, the rest settlements). */
export const SETTLEMENT_TYPE_WORDS: Readonly<Record<string, readonly string[]>> = {
  г: ['г', 'гор', 'город'],
  пгт: ['пгт', 'п.г.т', 'поселок городского типа'],
  рп: ['рп', 'р.п', 'раб.пос', 'рабочий поселок'],
  с: ['с', 'село'],
  д: ['д', 'дер', 'деревня'],
  п: ['п', 'пос', 'поселок'],
};

/**
 * Region types: the word the register writes in the region's name → the words that name it.
 * `г` (a federal city: Москва, Санкт-Петербург, Севастополь) is written nowhere: the name alone.
 */
export const REGION_TYPE_WORDS: Readonly<Record<string, readonly string[]>> = {
  область: ['обл', 'область'],
  край: ['край', 'кр'],
  Республика: ['респ', 'республика'],
  'автономный округ': ['ао', 'авт. округ', 'авт.округ', 'автономный округ'],
  'автономная область': ['аобл', 'авт. обл', 'автономная обл', 'автономная область'],
  '': ['г', 'город'],
};

/** District types (`Новосибирский р-н`): the register writes `район`. */
export const DISTRICT_TYPE_WORDS: Readonly<Record<string, readonly string[]>> = {
  район: ['р-н', 'р-он', 'район'],
};

/** How a word is compared: lower case, `ё` as `е`. */
export const typeWordKey = (word: string): string => word.toLowerCase().replace(/ё/g, 'е');

export interface TypedName {
  name: string;
  /** The table's key for the type word the text had before or after its name; absent when it had none. */
  type?: string;
}

export interface TypeWordTable {
  /** `ул. Ленина`, `Ленина ул`, `ул.Ленина`, `Хорошёвское ш.` → the name and its type; the name as written. */
  split(text: string): TypedName;
  /** The type `word` names alone (`улица`, `ш.`), a dot after it allowed; undefined when it is none of the table's words. */
  typeOf(word: string): string | undefined;
}

const escape = (word: string): string => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s*');

/**
 * A table's words as matchers. A word stands before the name, ended by a dot or a space
 * (`ул.Ленина`, `ул Ленина`), or after it, after a space (`Ленина ул.`); the name is never
 * left empty (a street named `Набережная` stays so).
 */
export function typeWordTable(table: Readonly<Record<string, readonly string[]>>): TypeWordTable {
  const byWord = new Map<string, string>();
  for (const [type, words] of Object.entries(table)) for (const word of words) byWord.set(word, type);
  // Longest first: `пр-кт` before `пр`, `поселок городского типа` before `поселок`.
  const alternatives = [...byWord.keys()]
    .sort((a, b) => b.length - a.length)
    .map(escape)
    .join('|');
  const before = new RegExp(`^(${alternatives})(?:\\.\\s*|\\s+)(?=\\S)`, 'iu');
  const after = new RegExp(`(?<=\\S)\\s+(${alternatives})\\.?$`, 'iu');
  const typeOf = (word: string): string | undefined => byWord.get(typeWordKey(word).replace(/\s+/g, ' '));
  return {
    split(text) {
      const trimmed = text.trim();
      const key = typeWordKey(trimmed);
      const head = before.exec(key);
      if (head) {
        const type = typeOf(head[1]!);
        const name = trimmed.slice(head[0].length).trim();
        if (type !== undefined && name !== '') return { name, type };
      }
      const tail = after.exec(key);
      if (tail) {
        const type = typeOf(tail[1]!);
        const name = trimmed.slice(0, tail.index).trim();
        if (type !== undefined && name !== '') return { name, type };
      }
      return { name: trimmed };
    },
    typeOf(word) {
      return typeOf(word.trim().replace(/\.$/, ''));
    },
  };
}
