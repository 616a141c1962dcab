/**
 * What the sandbox knows of uploaded contents (contents.ts): the ids it gave, and counts. Kept
 * per runtime, apart from the handlers, so that docflow creation (handlers.ts) can check the
 * ids a docflow names with `--strict-contents`.
 */
import type { Problem } from './docflow-validation.js';

interface Contents {
  ids: Set<string>;
  uploads: number;
  bytes: number;
  /** Docflow creations refused by --strict-contents. */
  refusedDocflows: number;
}

/** Keyed by the runtime (its own object: nothing of it is read here but the strict flag). */
type RuntimeLike = { config: { strictContents: boolean } };
const byRuntime = new WeakMap<RuntimeLike, Contents>();

export function contentsOf(rt: RuntimeLike): Contents {
  let contents = byRuntime.get(rt);
  if (!contents) byRuntime.set(rt, (contents = { ids: new Set(), uploads: 0, bytes: 0, refusedDocflows: 0 }));
  return contents;
}

/** For `/__sandbox/stats`: contents received (201) and their bytes, and docflows refused for naming another. */
export function contentStats(rt: RuntimeLike): { uploads: number; bytes: number; refusedDocflows: number } {
  const { uploads, bytes, refusedDocflows } = contentsOf(rt);
  return { uploads, bytes, refusedDocflows };
}

/** The content ids a request names, each with where: `[target, id]`. */
export type NamedContents = ReadonlyArray<readonly [string, unknown]>;

/**
 * With --strict-contents, the content ids a docflow names (its type says which: types/) that
 * the sandbox never received, as validation problems; none without the flag.
 */
export function unknownContents(rt: RuntimeLike, named: NamedContents): Problem[] {
  if (!rt.config.strictContents) return [];
  const { ids } = contentsOf(rt);
  const problems: Problem[] = named
    .filter(([, id]) => typeof id === 'string' && !ids.has(id))
    .map(([target]) => ({ code: 'format', message: 'No content with this id was uploaded', target }));
  if (problems.length > 0) contentsOf(rt).refusedDocflows += 1;
  return problems;
}
