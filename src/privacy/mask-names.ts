/**
 * A row's persons' names masked in a text, however it spells them: each word (or each run of
 * pieces a hostile spelling cut a name into: `Се-мё-нов`, `С е м ё н о в`, `С.Е.М.Ё.Н.О.В`) whose
 * key (name-key.ts) is a name of the matcher's, and beside such a name its initials and the
 * given name and patronymic that go with it. The text should be normalized first
 * (normalize-text.ts): invisible characters inside a word would cut it.
 */
import { keysOfWord } from './name-key.js';
import { nameKeyIn, type NameMatcher } from './name-filter.js';

export const MASK = '***';

interface Token {
  start: number;
  end: number;
  text: string;
  /** Holds a letter (a token of digits alone is never a name). */
  word: boolean;
}

const TOKEN = /[\p{L}\p{M}\d]+/gu;
const LETTER = /\p{L}/u;
const SPACE = /^\s$/u;
/** Between a name and its given name or initials: spaces, a comma, a dot, a hyphen; a few at most. */
const NEAR = /^[\s,.\-‐-―]{1,3}$/u;
/** Pieces a name may be cut into, at most. */
const MAX_PIECES = 12;
/** Words beside a name that may be its initials, given name and patronymic, each side. */
const BESIDE = 2;

function tokensOf(text: string): Token[] {
  return Array.from(text.matchAll(TOKEN), (m) => ({
    start: m.index,
    end: m.index + m[0].length,
    text: m[0],
    word: LETTER.test(m[0]),
  }));
}

/** A single letter that is an initial: a capital, or a letter followed by a dot. */
function isInitial(text: string, token: Token): boolean {
  if (Array.from(token.text).length !== 1 || !token.word) return false;
  return text[token.end] === '.' || token.text !== token.text.toLowerCase();
}

/** What is masked: per token, the key of the name it is (or is part of), '' for a word beside one. */
interface Marks {
  masked: Array<string | undefined>;
  /** Tokens masked with the next as one run (a name cut into pieces). */
  joined: boolean[];
}

export function maskNames(text: string, matcher: NameMatcher): string {
  const tokens = tokensOf(text);
  const marks: Marks = { masked: new Array<string | undefined>(tokens.length), joined: new Array<boolean>(tokens.length).fill(false) };
  const gap = (i: number): string => text.slice(tokens[i]!.end, tokens[i + 1]!.start);
  for (let i = 0; i < tokens.length; i++) markName(tokens, i, gap, matcher, marks);
  for (let i = 0; i < tokens.length; i++) {
    const key = marks.masked[i];
    if (key) for (const step of [1, -1] as const) markBeside(text, tokens, i, step, key, gap, matcher, marks);
  }
  return render(text, tokens, marks);
}

const letters = (token: Token): number => Array.from(token.text).length;

/**
 * Token `i` as a name, alone, or with the tokens after it as the pieces of one: cut by single
 * characters (a dash, a dot, an apostrophe), or by single spaces between single letters.
 */
function markName(tokens: Token[], i: number, gap: (i: number) => string, matcher: NameMatcher, marks: Marks): void {
  const t = tokens[i]!;
  if (t.word && marks.masked[i] === undefined) {
    const key = nameKeyIn(t.text, matcher);
    if (key) marks.masked[i] = key;
  }
  let whole = t.text;
  for (let j = i + 1; j < tokens.length && j - i < MAX_PIECES; j++) {
    const between = gap(j - 1);
    if (between.length !== 1 || (SPACE.test(between) && (letters(tokens[j - 1]!) > 1 || letters(tokens[j]!) > 1))) break;
    whole += tokens[j]!.text;
    const key = LETTER.test(whole) ? nameKeyIn(whole, matcher) : undefined;
    if (!key) continue;
    for (let k = i; k <= j; k++) marks.masked[k] = key;
    for (let k = i; k < j; k++) marks.joined[k] = true;
  }
}

/** Beside the name at `i` (after it, step 1; before it, -1): its initials, given name and patronymic. */
function markBeside(
  text: string,
  tokens: Token[],
  i: number,
  step: 1 | -1,
  key: string,
  gap: (i: number) => string,
  matcher: NameMatcher,
  marks: Marks,
): void {
  for (let n = 1, j = i + step; n <= BESIDE && j >= 0 && j < tokens.length; n++, j += step) {
    if (marks.masked[j] !== undefined) continue;
    const t = tokens[j]!;
    if (!t.word || !NEAR.test(gap(step > 0 ? j - 1 : j))) return;
    // An initial before a name has its dot (А.П. Семёнов): a capital alone before one is a word (В Семёнове).
    const initial = isInitial(text, t) && (step > 0 || text[t.end] === '.');
    if (!initial && !keysOfWord(t.text).some((k) => matcher.isBeside(key, k))) return;
    marks.masked[j] = '';
  }
}

function render(text: string, tokens: Token[], marks: Marks): string {
  let out = '';
  let at = 0;
  for (let i = 0; i < tokens.length; i++) {
    if (marks.masked[i] === undefined) continue;
    let last = i;
    while (marks.joined[last]) last++;
    out += `${text.slice(at, tokens[i]!.start)}${MASK}`;
    at = tokens[last]!.end;
    i = last;
  }
  return out + text.slice(at);
}
