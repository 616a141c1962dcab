/**
 * The tests' own databases (test/helpers/database.ts): each one a test asks for is migrated,
 * apart from every other, and gone once dropped; PostgreSQL's problem, when there is one, fails
 * the test that asks instead of skipping it.
 */
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../../src/db/migrations/index.js';
import { adminQuery, ENGINES, openTestDatabase, PROBLEM_VARIABLE, type TestDatabase } from '../../helpers/database.js';

describe.each(ENGINES)('a test database on %s', (engine) => {
  const opened: TestDatabase[] = [];
  afterEach(async () => {
    for (const t of opened.splice(0)) await t.drop();
  });

  it('is migrated, apart from the next one, and gone once dropped', async () => {
    const [a, b] = await Promise.all([openTestDatabase(engine), openTestDatabase(engine)]);
    opened.push(a!, b!);
    expect(a!.target).not.toEqual(b!.target);
    for (const t of [a!, b!]) {
      const { rows } = await sql<{ v: number }>`select max(version) as v from schema_migrations`.execute(t.db.kysely);
      expect(Number(rows[0]!.v)).toBe(SCHEMA_VERSION);
    }
    await a!.db.kysely
      .insertInto('operator_actions')
      .values({ at: 'now', who: 'a', action: 'test', batch: null, deal_id: null, detail: '{}' })
      .execute();
    expect(await b!.db.kysely.selectFrom('operator_actions').selectAll().execute()).toEqual([]);

    await a!.drop();
    await a!.drop();
    if (a!.target.engine === 'sqlite') expect(existsSync(a!.target.path)).toBe(false);
    else {
      const name = new URL(a!.target.url).pathname.slice(1);
      expect(await adminQuery('select 1 from pg_database where datname = $1', [name])).toEqual([]);
    }
  });
});

describe('a PostgreSQL test database on a machine without PostgreSQL', () => {
  afterEach(() => {
    delete process.env[PROBLEM_VARIABLE];
  });

  it('fails the test with the sentence saying what to run, never skips it', async () => {
    process.env[PROBLEM_VARIABLE] =
      'PostgreSQL does not answer at 127.0.0.1:5432 (connection refused): run `node scripts/prepare-tests.mjs`.';
    await expect(openTestDatabase('postgres')).rejects.toThrow(process.env[PROBLEM_VARIABLE]);
  });
});
