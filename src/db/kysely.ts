/**
 * Kysely's values, from its CommonJS build: its ES module build is hundreds of files, which
 * Node 20 loads as an asynchronous module graph, more slowly than one `require`. Every command
 * opens the database, and the tests start hundreds of commands, so the start of each counts.
 * Its types still come from 'kysely' (type imports are erased).
 */
import { createRequire } from 'node:module';
import type * as KyselyModule from 'kysely';

const kysely = createRequire(import.meta.url)('kysely') as typeof KyselyModule;

export const { CompiledQuery, Kysely: KyselyClass, PostgresDialect, SqliteDialect, sql } = kysely;
