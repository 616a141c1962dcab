/**
 * Records whose shape cannot be read: a CSV row with another number of cells
 * than the header (its cells may be shifted, or the whole line may sit in the
 * first one), a JSON Lines line that is not JSON, an item that is not an object,
 * a record nested too deep. Their fields are left empty, so no cell of theirs
 * becomes a dealId (the results file, the outcomes, the logs), and the
 * validator adds no problem of its own: the reader's one problem says why.
 */
const unreadable = new WeakSet<object>();

/** Empty fields for a record that cannot be read: the validator knows them by identity. */
export function unreadableFields(): Record<string, string> {
  const fields: Record<string, string> = {};
  unreadable.add(fields);
  return fields;
}

export function isUnreadable(fields: object): boolean {
  return unreadable.has(fields);
}
