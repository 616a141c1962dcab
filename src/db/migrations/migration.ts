/** What one migration is: a file of its own, listed in ./index.ts (which a migration never imports: a loop). */
import type { Kysely } from 'kysely';
import type { Engine } from '../database.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  /** Runs inside the migration's transaction; `db` is untyped: a migration sees the tables as they were then. */
  up(db: Kysely<unknown>, engine: Engine): Promise<void>;
}
