/**
 * Queries of the hot path compiled once and run again with new values: Kysely builds and
 * compiles a query's tree at every run, work that on SQLite outweighs running the statement
 * itself (docs/performance.md). The SQL text of a query whose shape never changes is kept per
 * engine after its first compile, and later runs pass only its values. Its values must be the ones the builder was given, in the builder's order: the
 * first compile checks that, so a query built with other values fails at once, not silently.
 *
 * An insert or an update whose columns vary from call to call has one shape per set of
 * columns: `columnsOf` names the set, and the name of the query carries it.
 */
import type { Compilable, CompiledQuery as Compiled, QueryResult } from 'kysely';
import type { Trx } from './database.js';
import { CompiledQuery } from 'kysely';

/**
 * The kept queries of each dialect (its adapter names the SQL's form: $1 or ?, FOR UPDATE or
 * not), by name. A run is the kept query with the call's values: nothing is built, frozen or
 * hashed again (its queryId, which only plugins read, is the kept one: the database has none).
 */
const kept = new WeakMap<object, Map<string, Compiled>>();

/**
 * Runs `build`'s query with `values`: built and compiled the first time per dialect (`name`
 * names the query), the kept SQL run with `values` after. `values` must be exactly the
 * builder's parameters, in order.
 */
export async function runCompiled<R>(trx: Trx, name: string, values: readonly unknown[], build: () => Compilable<R>): Promise<R[]> {
  return (await executeCompiled(trx, name, values, build)).rows;
}

/** runCompiled's whole result: an insert's, update's or delete's `numAffectedRows` too. */
export function executeCompiled<R>(
  trx: Trx,
  name: string,
  values: readonly unknown[],
  build: () => Compilable<R>,
): Promise<QueryResult<R>> {
  const executor = trx.getExecutor();
  let queries = kept.get(executor.adapter);
  if (queries === undefined) kept.set(executor.adapter, (queries = new Map<string, Compiled>()));
  let query = queries.get(name);
  if (query === undefined) {
    const compiled = build().compile();
    const same = compiled.parameters.length === values.length && compiled.parameters.every((p, i) => p === values[i]);
    if (!same)
      throw new Error(
        `The query ${name} was built with other values than it is run with: ${name}'s values must be its parameters, in order.`,
      );
    query = CompiledQuery.raw(compiled.sql);
    queries.set(name, query);
  }
  return trx.executeQuery<R>({ sql: query.sql, query: query.query, queryId: query.queryId, parameters: values });
}

/**
 * An insert's or an update's object as Kysely reads it: the columns whose value is not
 * `undefined` (Kysely leaves those out), in the object's order, and their values. `columns`
 * joined is the set's name.
 */
export function columnsOf(set: object): { columns: string; values: unknown[] } {
  let columns = '';
  const values: unknown[] = [];
  for (const column in set) {
    const value = (set as Record<string, unknown>)[column];
    if (value === undefined) continue;
    columns += columns === '' ? column : `,${column}`;
    values.push(value);
  }
  return { columns, values };
}
