/**
 * The key a name is matched by, the same for every way a registry may write it: any case,
 * ё or е, Cyrillic or a Latin transliteration (Семёнов, SEMENOV, Semyonov, Semjonov), Latin
 * look-alike letters inside a Cyrillic word (`Ceмёнов` with a Latin C), and, through
 * `keysOfWord`, the declined forms (Семёнову, Семёновым, Семёновой).
 *
 * The key is the name's consonants in sound classes (`s` + skeleton: Семёнов and Semyonov
 * are both `smnv`), as transliterations differ mostly in their vowels (ё: e, yo, io, jo; я:
 * ya, ia, ja) and Russian declension mostly in endings of vowels; a name of fewer than three
 * consonants (Ян, Ким, Иван) keeps its vowels (`w` + `ian`, `kim`, `ivan`). Two names may
 * share a key (Семёнов, Симонов): masking one masks the other, which costs a word, never a
 * person's name.
 */

/** Latin letters and digits that look like Cyrillic ones, inside a word that has Cyrillic letters. */
const LOOK_ALIKE: Record<string, string> = {
  a: 'а',
  b: 'в',
  c: 'с',
  e: 'е',
  h: 'н',
  k: 'к',
  m: 'м',
  o: 'о',
  p: 'р',
  t: 'т',
  x: 'х',
  y: 'у',
  '0': 'о',
  '3': 'з',
  '6': 'б',
};
const CYRILLIC = /[\u0400-\u04ff]/;
const LATIN_OR_DIGIT = /[a-z0-9]/g;

/** A word lower-cased, its accents and diacritics dropped (ё → е, й → и), its look-alikes made Cyrillic. */
export function foldWord(word: string): string {
  const folded = word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  return CYRILLIC.test(folded) ? folded.replace(LATIN_OR_DIGIT, (c) => LOOK_ALIKE[c] ?? c) : folded;
}

/** Cyrillic consonants in their sound class; vowels, й and the signs are dropped. */
const CYRILLIC_CLASS: Record<string, string> = {
  б: 'b',
  в: 'v',
  ф: 'v',
  г: 'g',
  д: 'd',
  т: 't',
  ж: 'z',
  з: 'z',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  п: 'p',
  р: 'r',
  с: 's',
  ш: 's',
  щ: 's',
  х: 'h',
  ц: 'c',
  ч: 'c',
};
/** Latin letter groups of the common transliterations, longest first, in the same classes. */
const LATIN_GROUPS: Array<[RegExp, string]> = [
  [/shch|sch|tsch/g, 's'],
  [/tch|ch|ts|tz/g, 'c'],
  [/zh/g, 'z'],
  [/kh/g, 'h'],
  [/sh/g, 's'],
  [/ph/g, 'v'],
  [/ck/g, 'k'],
  [/x/g, 'ks'],
];
const LATIN_CLASS: Record<string, string> = { q: 'k', w: 'v', f: 'v', j: '', y: '', a: '', e: '', i: '', o: '', u: '' };

const HAS_LATIN = /[a-z]/;

/** The consonant skeleton of a folded word: `smnv` for семенов and semyonov. */
function skeleton(folded: string): string {
  let latin = folded;
  if (HAS_LATIN.test(folded)) for (const [group, cls] of LATIN_GROUPS) latin = latin.replace(group, cls);
  let out = '';
  for (const ch of latin) {
    const cls = CYRILLIC_CLASS[ch] ?? LATIN_CLASS[ch] ?? (ch >= 'a' && ch <= 'z' ? ch : '');
    // A doubled consonant is one (Анна, Kuznetssov).
    if (cls && !out.endsWith(cls)) out += cls;
  }
  return out;
}

/** Cyrillic in Latin letters, as the ICAO and GOST transliterations mostly agree. */
const TO_LATIN: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  д: 'd',
  е: 'e',
  ж: 'zh',
  з: 'z',
  и: 'i',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'iu',
  я: 'ia',
};

/** A short name with its vowels: transliterated, y and j as i, doubled letters as one (`ian` for Ян, Yan, Jan). */
function vowelForm(folded: string): string {
  const latin = Array.from(folded, (ch) => TO_LATIN[ch] ?? ch)
    .join('')
    .replace(/[yj]/g, 'i')
    .replace(/[^a-z]/g, '');
  return latin.replace(/(.)\1+/g, '$1');
}

/** Fewer consonants than this, and a name keeps its vowels. */
const SKELETON_MIN = 3;

/** The parts of a folded word its keys are made of. */
function partsOf(folded: string): { skeleton: string; vowels: string } {
  return { skeleton: skeleton(folded), vowels: vowelForm(folded) };
}

/** A Latin word made only of letters that look Cyrillic (CEMEHOB): read as the Cyrillic it looks like too. */
const ALL_LOOK_ALIKE = /^[abcehkmoptxy036]+$/;

/**
 * Keys of names made lately: a night's rows share their given names and patronymics, and the
 * representative is on every row (each claim makes its deal's filter). Emptied when full.
 */
const made = new Map<string, string | undefined>();
const MADE_MAX = 10_000;

/** The key of a name (one word); undefined for a word of fewer than two letters. */
export function nameKey(word: string): string | undefined {
  if (made.has(word)) return made.get(word);
  const folded = foldWord(word);
  const bones = skeleton(folded);
  let key: string | undefined = `s${bones}`;
  if (bones.length < SKELETON_MIN) {
    const vowels = vowelForm(folded);
    key = vowels.length >= 2 ? `w${vowels}` : undefined;
  }
  if (made.size >= MADE_MAX) made.clear();
  made.set(word, key);
  return key;
}

/**
 * The keys a word of a text may stand for a name by: its own, and, for the endings declension
 * adds, the key without them (Семёновым: `smnvm` and `smnv`; Ивану: `wivanu` and `wivan`).
 */
export function keysOfWord(word: string): string[] {
  const folded = foldWord(word);
  const readings = ALL_LOOK_ALIKE.test(folded) ? [folded, folded.replace(LATIN_OR_DIGIT, (c) => LOOK_ALIKE[c] ?? c)] : [folded];
  const keys: string[] = [];
  for (const reading of readings) {
    const { skeleton: bones, vowels } = partsOf(reading);
    if (bones.length >= SKELETON_MIN) {
      keys.push(`s${bones}`);
      if (bones.length > SKELETON_MIN) keys.push(`s${bones.slice(0, -1)}`);
    }
    // A short name declined may have grown a consonant (Иваном: vn → vnm): its vowel forms too.
    if (bones.length <= SKELETON_MIN) {
      if (vowels.length >= 2) keys.push(`w${vowels}`);
      // Declined (Яна, Яну, Яном): its endings cut off, down to three letters (a name of two, Ли, Ия, is taken whole).
      for (let cut = 1; cut <= 3 && vowels.length - cut >= 3; cut++) keys.push(`w${vowels.slice(0, vowels.length - cut)}`);
    }
  }
  return keys;
}
