/** What the figures share: Redis, the database, the bank profile, a quiet logger, the generated inputs. */
import type { BankProfile } from '../src/input/profile.js';
import type { Logger } from '../src/logger.js';
import type { BenchDatabase } from './database.js';
import type { BenchRedis } from './redis.js';

export interface InputFile {
  file: string;
  rows: number;
  bytes: number;
}

export interface BenchContext {
  redis: BenchRedis;
  /** The system of record (SQLite under /dev/shm): emptied with Redis after each run (bench/database.ts). */
  database: BenchDatabase;
  /**
   * A PostgreSQL database of the bench's own (bench/database.ts), for the figures measured on
   * both engines (`writes`, `latency`); undefined when no group of the run needs it.
   */
  postgres: BenchDatabase | undefined;
  profile: BankProfile;
  profileFile: string;
  logger: Logger;
  /** A folder under os.tmpdir() for the generated inputs and rejects files; removed at the end. */
  dir: string;
  /** Runs per figure (the median is reported). */
  runs: number;
  /** `--profile full` (`npm run bench:full`): every figure at its full size; else the quick sizes (bench/README.md). */
  full: boolean;
  files: {
    csv: InputFile;
    csv1251: InputFile;
    jsonl: InputFile;
  };
}
