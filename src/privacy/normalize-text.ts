/**
 * A text as masking reads it. A registry or a gateway may write a person's values in forms
 * that compare unequal to the input's while a person reads them the same: full-width or
 * other compatibility digits and letters (`１２３`), characters nobody sees inside a word (a
 * zero-width space, a soft hyphen, a bidi mark), digits of another script. Masking runs on
 * this form, and the masked text is this form: nothing of the original spelling survives
 * to hide a value from the patterns.
 */

/**
 * Characters with no look of their own: zero-width spaces and joiners, the soft hyphen,
 * bidi controls, variation selectors, the combining grapheme joiner, tags.
 */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;
/** A decimal digit of any script but ASCII's (NFKC already made full-width and mathematical ones ASCII). */
const OTHER_DIGIT = /(?![0-9])\p{Nd}/u;
const OTHER_DIGITS = new RegExp(OTHER_DIGIT.source, 'gu');
const DIGIT = /^\p{Nd}$/u;

/** Unicode's decimal digits come in runs of ten, zero first: a digit's value is its place in its run. */
function digitValue(digit: string): string {
  const code = digit.codePointAt(0)!;
  let start = code;
  // Runs may stand back to back (the mathematical digits' five): counted in tens from the first.
  while (start > code - 100 && DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return String((code - start) % 10);
}

/**
 * NFKC, invisible characters removed, every decimal digit as its ASCII digit. The numero sign
 * stays (NFKC would write `№` as `No`, which a Russian reader does not expect of a passport).
 */
export function normalizeText(text: string): string {
  const plain = text
    .split('№')
    .map((part) => part.normalize('NFKC'))
    .join('№')
    .replace(INVISIBLE, '');
  return OTHER_DIGIT.test(plain) ? plain.replace(OTHER_DIGITS, digitValue) : plain;
}
