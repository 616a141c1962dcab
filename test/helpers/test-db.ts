/**
 * A database of each test's own (or, `{ per: 'file' }`, of the file's) for the integration
 * tests of the worker, the load and the commands: opened and migrated before, dropped after.
 * Tests share the samples' dealIds, so a ledger shared between tests would find each test's
 * deals submitted by the one before. SQLite by default (the embedded engine every deployment
 * starts on); the storage contract runs on both engines.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Database } from '../../src/db/database.js';
import type { DatabaseTarget } from '../../src/db/location.js';
import { openTestDatabase, type TestDatabase, type TestEngine } from './database.js';

export interface UsedDatabase {
  /** The open database (valid inside the tests, after beforeAll). */
  readonly db: Database;
  /** Where it is: for a child process (DATABASE_URL) or an Env (`database`). */
  readonly target: DatabaseTarget;
  /** `DATABASE_URL` for a child process. */
  readonly url: string;
}

export function useTestDatabase(options: { engine?: TestEngine; per?: 'test' | 'file' } = {}): UsedDatabase {
  let made: TestDatabase | undefined;
  const [before, after] = options.per === 'file' ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(async () => {
    made = await openTestDatabase(options.engine ?? 'sqlite');
  });
  after(async () => {
    await made?.drop();
    made = undefined;
  });
  const open = (): TestDatabase => {
    if (!made) throw new Error('the test database is opened before each test (or the file): use it inside a test or a hook');
    return made;
  };
  return {
    get db() {
      return open().db;
    },
    get target() {
      return open().target;
    },
    get url() {
      const { target } = open();
      return target.engine === 'sqlite' ? `sqlite:${target.path}` : target.url;
    },
  };
}
