/**
 * One gateway session for the whole fleet (REALTY_LOGIN, REALTY_PASSWORD, REALTY_ACCOUNT_ID):
 * kept in Redis under the deployment's tag with a generation number, the id encrypted at
 * rest (AES-256-GCM, a fresh 12-byte IV per write, the key name and generation as associated
 * data). The key is HKDF-SHA256 of REALTY_SESSION_KEY (a random secret every host of the fleet
 * is given, never stored in Redis or the database) salted with the login, the account and the
 * prefix: whoever reads Redis learns nothing of the session, nor has anything to try passwords
 * against. Without REALTY_SESSION_KEY the key is scrypt(REALTY_PASSWORD) with the same salt, as
 * before the variable existed, and every process says once (a warn line) what to set: a fleet
 * upgraded without it keeps working, its session as safe as its password is hard to guess.
 *
 * A 401 to generation N asks for N+1: a lock (SET NX PX) lets exactly one process of the
 * fleet log in; the others wait for N+1 to appear in Redis and take it. A login that fails
 * is marked with its lock's token and generation, so the processes that waited for it fail
 * with it, and a refused one (LoginRefusedError) is not tried again for that generation by
 * any process but one that starts (its operator may have fixed the credentials).
 */
import { createCipheriv, createDecipheriv, hkdf, randomBytes, scrypt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiNetworkError, LoginRefusedError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Credentials, Session, SessionProvider } from '../realty/session.js';
import type { RedisClient } from './connection.js';
import { tokenLock } from './token-lock.js';
import { luaFile } from './lua.js';
import type { Keys } from './keys.js';

export interface FleetSessionOptions {
  redis: RedisClient;
  keys: Pick<Keys, 'prefix' | 'session' | 'sessionLock'>;
  credentials: Credentials;
  /** REALTY_SESSION_KEY (src/config.ts): what the stored session is sealed with; without it, the password (and a warn line). */
  sessionKey?: string | undefined;
  /** `POST /auth`: a new session id (src/realty/session.ts: logIn). */
  logIn: () => Promise<string>;
  /** How long one login may hold the lock (ms): more than a login's time-out. */
  lockMs: number;
  /** How often a process waiting for another's login looks (ms, default 50). */
  pollMs?: number;
  logger?: Logger;
}

export interface FleetSession extends SessionProvider {
  /** Takes the fleet's session from Redis, or logs in when there is none (LoginRefusedError on a 400). */
  start(): Promise<void>;
}

/** What a process of a fleet without REALTY_SESSION_KEY says once, when it starts. */
export const NO_SESSION_KEY =
  "REALTY_SESSION_KEY is not set: the fleet's session in Redis is sealed with a key made from REALTY_PASSWORD; set REALTY_SESSION_KEY (or REALTY_SESSION_KEY_FILE, a file of mode 0600) to the same random secret on every host, made with openssl rand -base64 32";

/** How long the stored session outlives its last login: a session older than that is surely dead. */
const KEEP_MS = 7 * 24 * 60 * 60 * 1000;

/** Stores a login's generation unless one as new is there already (src/redis/lua/session-store.lua). */
const STORE = luaFile('session-store');

/**
 * The error a renewal ends with, if the `failed` mark says so: the login this process waited for
 * (its lock's token) failed, or this generation's login was refused (not tried again unless
 * `retryRefused`: a process that starts, the operator may have fixed the password).
 */
function refusal(failed: string | undefined, base: number, retryRefused: boolean, seenLock: string | null): Error | undefined {
  const [failedToken, failedBase, kind] = (failed ?? '').split(':');
  const waitedFor = seenLock !== null && failedToken === seenLock;
  const refusedBefore = !retryRefused && kind === 'refused' && Number(failedBase) === base;
  if (!waitedFor && !refusedBefore) return undefined;
  return kind === 'refused' ? new LoginRefusedError(400) : new ApiNetworkError('auth', 'LOGIN_FAILED');
}

export function createFleetSession(options: FleetSessionOptions): FleetSession {
  const { redis, keys, credentials, logger } = options;
  const pollMs = options.pollMs ?? 50;
  let key: Promise<Buffer> | undefined;
  const salt = `realty-batch session|${credentials.login}|${credentials.accountId}|${keys.prefix}`;
  const { sessionKey } = options;
  const cipherKey = (): Promise<Buffer> =>
    (key ??= new Promise((resolve, reject) =>
      sessionKey !== undefined
        ? hkdf('sha256', sessionKey, salt, 'fleet session', 32, (err, derived) => (err ? reject(err) : resolve(Buffer.from(derived))))
        : scrypt(credentials.password, salt, 32, (err, derived) => (err ? reject(err) : resolve(derived))),
    ));
  const aad = (generation: number) => Buffer.from(`${keys.session}#${generation}`);

  async function seal(id: string, generation: number): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', await cipherKey(), iv).setAAD(aad(generation));
    const sealed = Buffer.concat([cipher.update(id, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
  }

  /** The stored session's id, or undefined when it cannot be opened (another password, a tampered value). */
  async function open(box: string, generation: number): Promise<string | undefined> {
    try {
      const bytes = Buffer.from(box, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', await cipherKey(), bytes.subarray(0, 12)).setAAD(aad(generation));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }

  async function read(): Promise<{ generation: number; session?: Session; failed?: string }> {
    const [gen, box, failed] = await redis.hmget(keys.session, 'gen', 'box', 'failed');
    const generation = Number(gen ?? 0) || 0;
    const id = box ? await open(box, generation) : undefined;
    return { generation, ...(id !== undefined && { session: { id, generation } }), ...(failed ? { failed } : {}) };
  }

  let session: Session | undefined;
  let renewing: Promise<void> | undefined;

  /**
   * Makes `session` newer than `generation`: another process's login, or this one's. A login
   * of this generation already refused (by any process) is not tried again unless `retryRefused`
   * (a process that starts: the operator may have fixed the password).
   */
  async function newerThan(generation: number, retryRefused = false): Promise<void> {
    const waitUntil = Date.now() + 3 * options.lockMs;
    let seenLock: string | null = null;
    for (;;) {
      const stored = await read();
      if (stored.session && stored.generation > generation) {
        session = stored.session;
        return;
      }
      const base = Math.max(generation, stored.generation);
      const refused = refusal(stored.failed, base, retryRefused, seenLock);
      if (refused) throw refused;
      const lock = tokenLock(redis, keys.sessionLock, options.lockMs);
      if (await lock.acquire()) {
        try {
          // Looked at again under the lock: another process may have logged in, or been refused,
          // and let go of the lock between the look above and this one's taking it.
          const now = await read();
          if (now.session && now.generation > generation) {
            session = now.session;
            return;
          }
          const refusedNow = refusal(now.failed, Math.max(generation, now.generation), retryRefused, null);
          if (refusedNow) throw refusedNow;
          await logInForFleet(lock.token, Math.max(generation, now.generation));
        } finally {
          await lock.release();
        }
        return;
      }
      seenLock = (await redis.get(keys.sessionLock)) ?? seenLock;
      if (Date.now() > waitUntil) throw new ApiNetworkError('auth', 'LOGIN_WAIT_TIMEOUT');
      await sleep(pollMs);
    }
  }

  async function logInForFleet(token: string, storedGeneration: number): Promise<void> {
    let id: string;
    try {
      id = await options.logIn();
    } catch (err) {
      const kind = err instanceof LoginRefusedError ? 'refused' : 'other';
      await redis.hset(keys.session, 'failed', `${token}:${storedGeneration}:${kind}`).catch(() => undefined);
      logger?.error({ err: { code: (err as { code?: string }).code, message: (err as Error).message } }, 'the login to the gateway failed');
      throw err;
    }
    const generation = storedGeneration + 1;
    await STORE.run(redis, [keys.session], [String(generation), await seal(id, generation), String(KEEP_MS)]);
    session = { id, generation };
    logger?.info(
      { generation },
      generation === 1 ? 'logged in to the gateway' : 'logged in to the gateway again (a new session for the fleet)',
    );
  }

  return {
    async start() {
      if (sessionKey === undefined) logger?.warn(NO_SESSION_KEY);
      const stored = await read();
      // After a refused login, a process that starts tries once more: the credentials may be fixed.
      if (stored.session && !stored.failed?.endsWith(':refused')) session = stored.session;
      else await newerThan(stored.generation, true);
    },
    current() {
      if (!session) throw new Error('The fleet session is used before start().');
      return session;
    },
    async renew(generation) {
      while (session === undefined || session.generation <= generation) {
        renewing ??= newerThan(session?.generation ?? generation).finally(() => {
          renewing = undefined;
        });
        await renewing;
      }
      return true;
    },
  };
}
