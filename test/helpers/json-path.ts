/** Test data: a deep copy of `source` with each `a.b.c` path set to its value (undefined deletes it). */
export type Json = Record<string, unknown>;

export function withPaths(source: unknown, changes: Record<string, unknown>): Json {
  const copy = structuredClone(source) as Json;
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.split('.');
    const last = keys.pop() as string;
    let node = copy;
    for (const key of keys) node = node[key] as Json;
    if (value === undefined) delete node[last];
    else node[last] = value;
  }
  return copy;
}
