/** Names compared the way the register compares them: case, `ё` and spacing do not matter. */
export function normaliseName(value: string): string {
  return value.trim().toLowerCase().replace(/ё/g, 'е').replace(/\s+/g, ' ');
}

/** House and apartment numbers: as names, and spaces inside do not matter either (`39 а` = `39а`). */
export function normaliseNumber(value: string): string {
  return normaliseName(value).replace(/ /g, '');
}
