/** Where the database is: DATABASE_URL's forms, the default under the state home, and no password in any message. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { databaseTargetOf, describeTarget, describeUrl, urlWithoutPassword } from '../../src/db/location.js';
import { ConfigError } from '../../src/errors.js';

describe('the database location', () => {
  it('is a SQLite file named after the prefix under XDG_STATE_HOME, or ~/.local/state without it, never the working folder', () => {
    expect(loadConfig({ XDG_STATE_HOME: '/var/state', HOME: '/home/ops', REALTY_PREFIX: 'bank-a' }).database).toEqual({
      engine: 'sqlite',
      path: '/var/state/realty-batch/bank-a.db',
    });
    expect(loadConfig({ HOME: '/home/ops' }).database).toEqual({ engine: 'sqlite', path: '/home/ops/.local/state/realty-batch/realty.db' });
    // A relative XDG_STATE_HOME is ignored, as the XDG spec says: it would follow the working folder.
    expect(databaseTargetOf(undefined, 'realty', { XDG_STATE_HOME: 'state', HOME: '/home/ops' })).toEqual({
      engine: 'sqlite',
      path: '/home/ops/.local/state/realty-batch/realty.db',
    });
    expect(databaseTargetOf('  ', 'realty', { HOME: '/home/ops' })).toMatchObject({
      path: '/home/ops/.local/state/realty-batch/realty.db',
    });
    expect(Object.isFrozen(loadConfig({ HOME: '/home/ops' }).database)).toBe(true);
  });

  it('takes an absolute SQLite path in either URL form', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/realty/realty.db' }).database).toEqual({
      engine: 'sqlite',
      path: '/var/lib/realty/realty.db',
    });
    expect(databaseTargetOf('sqlite:///var/lib/realty/a%20b.db', 'realty')).toEqual({ engine: 'sqlite', path: '/var/lib/realty/a b.db' });
  });

  it('refuses a relative SQLite path, or none, with one sentence saying why', () => {
    for (const url of ['sqlite:realty.db', 'sqlite://data/realty.db', 'sqlite:', 'sqlite::memory:']) {
      expect(() => loadConfig({ DATABASE_URL: url }), url).toThrow(ConfigError);
      expect(() => loadConfig({ DATABASE_URL: url }), url).toThrow(
        `DATABASE_URL ${url} does not name an absolute path (sqlite:/var/lib/realty-batch/realty.db): a relative one would give every working folder a ledger of its own.`,
      );
    }
  });

  it('takes a postgres:// or postgresql:// URL as it is', () => {
    const url = 'postgres://realty:s3cret@db.bank:5432/realty?sslmode=require';
    expect(loadConfig({ DATABASE_URL: url }).database).toEqual({ engine: 'postgres', url });
    expect(databaseTargetOf('postgresql://realty@db.bank/realty', 'realty')).toEqual({
      engine: 'postgres',
      url: 'postgresql://realty@db.bank/realty',
    });
  });

  it('refuses any other scheme, naming the forms it takes and not the password', () => {
    let error: unknown;
    try {
      loadConfig({ DATABASE_URL: 'mysql://realty:s3cret@db.bank/realty' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'DATABASE_URL mysql://realty:***@db.bank/realty is neither sqlite:/absolute/path.db nor postgres://user@host/database.',
    );
  });

  it('never shows a password, whatever the spelling of the URL', () => {
    const urls = [
      'postgres://realty:s3cret@db.bank:5432/realty',
      'postgres://realty:s3cret@db.bank/realty?sslmode=require&password=s3cret',
      'postgres://db.bank/realty?password=s3cret',
      'postgres://:s3cret@db.bank/realty',
      // Not URLs at all: a password with an unescaped `/`, `#` or space in it.
      'postgres://realty:s3/cret@db.bank/realty',
      'postgres://realty:s3#cret@db.bank/realty?password=s3cret',
      'postgresql://realty:s3 cret@db.bank/realty',
      'realty:s3cret@db.bank/realty',
    ];
    for (const url of urls) {
      const shown = [describeTarget({ engine: 'postgres', url }), describeUrl(url), urlWithoutPassword(url)];
      for (const text of shown) expect(text, url).not.toMatch(/s3.?cret/);
      expect(shown[0], url).toMatch(/db\.bank/);
    }
    expect(describeTarget({ engine: 'postgres', url: urls[0]! })).toBe('postgres://realty:***@db.bank:5432/realty');
    expect(urlWithoutPassword(urls[1]!)).toBe('postgres://realty@db.bank/realty');
    expect(describeTarget({ engine: 'sqlite', path: '/var/lib/realty/realty.db' })).toBe('sqlite:/var/lib/realty/realty.db');
  });
});
