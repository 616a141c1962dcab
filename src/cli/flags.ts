/** The parsers of the command line's values: whole numbers, shares, a language. */
import { InvalidArgumentError } from 'commander';
import { LANGS, type Lang } from '../config.js';

export function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a whole number of at least 1.`);
    return n;
  };
}

export function nonNegativeInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a whole number of at least 0.`);
    return n;
  };
}

export function share(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0 || n > 1)
      throw new InvalidArgumentError(`${name} must be a share above 0 and at most 1 (0.5 = half).`);
    return n;
  };
}

/** `--lang ru|en`: the language of the files for a person (the attention and rejects files, payments, results for Excel). */
export function langFlag(value: string): Lang {
  const lang = value.trim().toLowerCase();
  if ((LANGS as readonly string[]).includes(lang)) return lang as Lang;
  throw new InvalidArgumentError(`--lang must be one of ${LANGS.join(', ')}.`);
}

export const LANG_HELP =
  'the language of the files for a person, ru or en (default: from the locale, LC_ALL, LC_MESSAGES or LANG): ru gives the attention and rejects files, payments, and results written --excel or as .xlsx Russian headers, outcome and state names, hints and error descriptions; the plain results CSV and JSONL keep English codes';
