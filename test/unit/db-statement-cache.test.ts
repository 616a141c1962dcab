/** The SQLite connection keeps each query's prepared statement (src/db/database.ts, cachingStatements). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachingStatements, openDatabase, type Database } from '../../src/db/database.js';
import { sql } from 'kysely';

describe('the SQLite statement cache', () => {
  let raw: BetterSqlite3.Database;

  beforeEach(() => {
    raw = new BetterSqlite3(':memory:');
    raw.exec('create table t (k integer primary key, v text)');
  });
  afterEach(() => raw.close());

  it('prepares a query once and gives the same statement to the next caller', () => {
    const conn = cachingStatements(raw);
    const first = conn.prepare('select v from t where k = ?');
    expect(conn.prepare('select v from t where k = ?')).toBe(first);
    expect(conn.prepare('select k from t where v = ?')).not.toBe(first);
  });

  it('gives a fresh statement while the kept one is still iterating', () => {
    const conn = cachingStatements(raw);
    raw.exec("insert into t (k, v) values (1, 'a'), (2, 'b')");
    const kept = conn.prepare('select v from t order by k');
    const rows = kept.iterate();
    expect(rows.next().value).toEqual({ v: 'a' });
    const second = conn.prepare('select v from t order by k');
    expect(second).not.toBe(kept);
    expect(second.all()).toEqual([{ v: 'a' }, { v: 'b' }]);
    expect(rows.next().value).toEqual({ v: 'b' });
    rows.return?.();
  });

  it("binds the driver's list of values, a long one too, in their order", () => {
    const conn = cachingStatements(raw);
    const short = conn.prepare('insert into t (k, v) values (?, ?), (?, ?)');
    expect(short.run([1, 'a', 2, 'b']).changes).toBe(2);
    // Past the 4,096 values given one argument each: the list goes to the driver as one array.
    const rows = Array.from({ length: 2500 }, (_, i) => [i + 10, `v${i + 10}`]);
    const long = conn.prepare(`insert into t (k, v) values ${rows.map(() => '(?, ?)').join(', ')}`);
    expect(long.run(rows.flat()).changes).toBe(2500);
    const read = conn.prepare('select k, v from t where k in (?, ?, ?) order by k');
    expect(read.all([2509, 1, 11])).toEqual([
      { k: 1, v: 'a' },
      { k: 11, v: 'v11' },
      { k: 2509, v: 'v2509' },
    ]);
    expect([...read.iterate([2, 10, 12])]).toEqual([
      { k: 2, v: 'b' },
      { k: 10, v: 'v10' },
      { k: 12, v: 'v12' },
    ]);
  });

  it('drops the least recently used statement past its size', () => {
    const conn = cachingStatements(raw, 2);
    const a = conn.prepare('select 1');
    const b = conn.prepare('select 2');
    expect(conn.prepare('select 1')).toBe(a); // now 'select 2' is the oldest
    conn.prepare('select 3');
    expect(conn.prepare('select 1')).toBe(a);
    expect(conn.prepare('select 2')).not.toBe(b);
  });
});

describe('queries through the cache', () => {
  let dir: string;
  let db: Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'statement-cache-'));
    db = openDatabase({ engine: 'sqlite', path: join(dir, 'cache.db') });
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('binds each call its own values, in and out of transactions', async () => {
    await sql`create table t (k integer primary key, v text)`.execute(db.kysely);
    for (let k = 1; k <= 3; k++) {
      await db.transaction((trx) => sql`insert into t (k, v) values (${k}, ${`v${k}`})`.execute(trx));
    }
    const read = async (k: number) => (await sql<{ v: string }>`select v from t where k = ${k}`.execute(db.kysely)).rows;
    expect(await read(2)).toEqual([{ v: 'v2' }]);
    expect(await read(3)).toEqual([{ v: 'v3' }]);
    expect(await read(4)).toEqual([]);
    // A failed transaction rolls back; the kept insert statement works after it.
    await expect(
      db.transaction(async (trx) => {
        await sql`insert into t (k, v) values (${9}, ${'v9'})`.execute(trx);
        await sql`insert into t (k, v) values (${1}, ${'dup'})`.execute(trx);
      }),
    ).rejects.toThrow(/UNIQUE|constraint/i);
    expect(await read(9)).toEqual([]);
    await db.transaction((trx) => sql`insert into t (k, v) values (${9}, ${'v9'})`.execute(trx));
    expect(await read(9)).toEqual([{ v: 'v9' }]);
  });
});
