/**
 * Kysely's values, from its CommonJS build: its ES module build is 280 files, which Node 20 loads
 * as an asynchronous module graph. Measured on this host, idle: `require('kysely')` 0.20 s,
 * `import('kysely')` 0.27 to 0.29 s, an empty node 0.10 s. Every command opens the database, and
 * the tests start hundreds of commands. Its types still come from 'kysely' (type imports are erased).
 */
import { createRequire } from 'node:module';
import type * as KyselyModule from 'kysely';

const kysely = createRequire(import.meta.url)('kysely') as typeof KyselyModule;

export const { CompiledQuery, Kysely: KyselyClass, PostgresDialect, SqliteDialect, sql } = kysely;
