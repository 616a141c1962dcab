// A worker's writes, as fast as they go, to the SQLite database at argv[2] until it is killed
// (test/integration/db/db-migrations.test.ts backs the database up meanwhile): one committed row of
// operator_actions per insert, 200 characters of detail each.
import { setImmediate } from 'node:timers';
import Database from 'better-sqlite3';

const db = new Database(process.argv[2], { timeout: 15_000 });
const insert = db.prepare(`insert into operator_actions (at, who, action, detail) values (?, 'writer', 'write', ?)`);
const detail = 'x'.repeat(200);

function write() {
  for (let i = 0; i < 20; i++) insert.run(new Date().toISOString(), detail);
  // Between two rounds: the event loop turns, and SIGTERM ends the process.
  setImmediate(write);
}
write();
