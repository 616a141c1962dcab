/**
 * The languages of the files meant for a person (the attention and rejects files, payments,
 * results for Excel): `--lang ru|en`. Here, below the configuration that picks one, so the
 * loader's rejects writer can take it.
 */
export const LANGS = ['ru', 'en'] as const;
export type Lang = (typeof LANGS)[number];
