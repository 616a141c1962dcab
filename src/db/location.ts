/**
 * Where the database is: `DATABASE_URL` (`sqlite:/absolute/path.db` or `postgres://…`), or the
 * embedded default `$XDG_STATE_HOME/realty-batch/<REALTY_PREFIX>.db` (`~/.local/state` without
 * it). Never the working folder: cron, systemd and a shell started in three folders would
 * each get a ledger of their own, and each would file the same deals again.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ConfigError } from '../errors.js';

export type DatabaseTarget = { engine: 'sqlite'; path: string } | { engine: 'postgres'; url: string };

/** The target `DATABASE_URL` names, or the default for `prefix`. */
export function databaseTargetOf(url: string | undefined, prefix: string, env: NodeJS.ProcessEnv = process.env): DatabaseTarget {
  if (url === undefined || url.trim() === '') return { engine: 'sqlite', path: defaultSqlitePath(prefix, env) };
  const given = url.trim();
  if (/^postgres(ql)?:\/\//i.test(given)) return { engine: 'postgres', url: given };
  const sqlite = /^sqlite:(?:\/\/)?(.*)$/i.exec(given);
  if (sqlite) {
    const path = decodeURIComponent(sqlite[1]!);
    if (path === '' || path === ':memory:' || !isAbsolute(path)) {
      throw new ConfigError(
        `DATABASE_URL ${given} does not name an absolute path (sqlite:/var/lib/realty-batch/realty.db): a relative one would give every working folder a ledger of its own.`,
      );
    }
    return { engine: 'sqlite', path };
  }
  throw new ConfigError(`DATABASE_URL ${describeUrl(given)} is neither sqlite:/absolute/path.db nor postgres://user@host/database.`);
}

/** `$XDG_STATE_HOME/realty-batch/<prefix>.db`; a relative XDG_STATE_HOME is ignored, as the spec says. */
export function defaultSqlitePath(prefix: string, env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  const stateHome = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'state');
  return join(stateHome, 'realty-batch', `${prefix}.db`);
}

/** A URL fit for a log line or a message: its password (and any query, which may hold one) left out. */
export function describeUrl(url: string): string {
  return withoutSecrets(url, '***');
}

/** The URL with no password at all (pg_dump and psql then take it from PGPASSWORD or ~/.pgpass), nor query. */
export function urlWithoutPassword(url: string): string {
  return withoutSecrets(url, '');
}

function withoutSecrets(url: string, mask: string): string {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    // Not a URL (a password with an unescaped `/` or `#` in it, say): everything up to the last `@` may be secret.
  }
  if (!u?.host) {
    return url
      .replace(
        /^([a-z][a-z0-9+.-]*:)?(\/\/)?.*@/is,
        (_: string, scheme?: string, slashes?: string) => `${scheme ?? ''}${slashes ?? ''}***@`,
      )
      .replace(/\?.*$/s, '');
  }
  if (u.password) u.password = mask;
  u.search = '';
  u.hash = '';
  return u.toString();
}

/** The target in words: the file's path, or the server's URL without its password. */
export function describeTarget(target: DatabaseTarget): string {
  return target.engine === 'sqlite' ? `sqlite:${target.path}` : describeUrl(target.url);
}
