/**
 * The columns the tool adds before a bank's own in the rejects file (`row`, `errors`) and the
 * attention file (`row`, `outcome`, `hint`, `errors`), and their headers in a file written for
 * a Russian reader (`--lang ru`). The loader knows both names of each (mapping.ts,
 * OWN_COLUMNS): a file of ours, fixed in Excel and loaded again, runs in either language.
 */
export const OWN_COLUMN_HEADERS_RU = {
  row: '№ строки',
  outcome: 'Результат',
  hint: 'Что сделать',
  errors: 'Ошибки',
} as const;

export type OwnColumn = keyof typeof OWN_COLUMN_HEADERS_RU;
