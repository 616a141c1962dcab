// One process migrating a database at the same moment as others (test/integration/db/db-migrations.test.ts):
// it opens the database given as JSON in argv[2], connects, prints `ready`, waits for a line on stdin
// (the go the test gives all of them at once), migrates with the built code, and prints the versions
// it applied as JSON. Run after `npm run build`.
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { openDatabase } from '../../dist/src/db/database.js';
import { migrate } from '../../dist/src/db/migrate.js';

const db = openDatabase(JSON.parse(process.argv[2]), { poolSize: 1 });
try {
  // Connected before the go: the processes race on the migration, not on their start.
  await sql`select 1`.execute(db.kysely);
  console.log('ready');
  await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
  console.log(JSON.stringify(await migrate(db)));
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
} finally {
  await db.close();
  process.stdin.destroy();
}
