/**
 * Wrong passwords slow down: after `failures` wrong credentials from one
 * address within `windowMs`, that address is answered 429 for `lockMs`, right
 * password or not. Kept in this process's memory: the dashboard is one process,
 * and a restart forgets the counts (and ends the lock-outs).
 */
import { isIPv4 } from 'node:net';
import type { Logger } from '../logger.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

export interface LoginThrottleOptions {
  /** Wrong credentials from one address that lock it out; default 10. */
  failures?: number;
  /** Within this long; default 60 s. */
  windowMs?: number;
  /** For this long; default 60 s. */
  lockMs?: number;
  /**
   * The most addresses remembered; default 10,000 (a few MB at most). When full,
   * the address that failed longest ago is forgotten, one locked out last of all.
   */
  maxAddresses?: number;
  logger?: Logger | undefined;
  /** The clock, in ms; tests move it. */
  now?: () => number;
}

export interface LoginThrottle {
  /** Milliseconds the address is still locked out for; 0 when it may try. */
  lockedFor(address: string): number;
  /** Counts one wrong try; true when it locked the address out. */
  fail(address: string): boolean;
  /** Addresses remembered now. */
  readonly size: number;
}

interface Entry {
  /** Times of the latest wrong tries, oldest first, at most `failures` of them. */
  times: number[];
  lockedUntil: number;
}

/** Expands an IPv6 address to its eight groups; undefined when it is not one. */
function ipv6Groups(address: string): string[] | undefined {
  const [head = '', tail, extra] = address.split('::');
  if (extra !== undefined) return undefined;
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  return [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right].map((g) =>
    g.toLowerCase().replace(/^0+(?=.)/, ''),
  );
}

/**
 * Who is counted: an IPv4 address as it is (also written as `::ffff:a.b.c.d`),
 * an IPv6 address by its /64, since one host holds a whole /64 and could
 * otherwise try from a new address every time.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIPv4(address)) return address;
  const groups = ipv6Groups(address.replace(/%.*$/, ''));
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : address;
}

export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const failures = options.failures ?? 10;
  const windowMs = options.windowMs ?? MINUTE;
  const lockMs = options.lockMs ?? MINUTE;
  const maxAddresses = options.maxAddresses ?? 10_000;
  const now = options.now ?? Date.now;
  // Insertion order is the order of the latest wrong try: the first entry failed longest ago.
  const entries = new Map<string, Entry>();

  function forgetOne(t: number): void {
    for (const [key, entry] of entries) {
      if (entry.lockedUntil <= t) {
        entries.delete(key);
        return;
      }
    }
    // Every address is locked out: the one locked longest ago goes.
    const oldest = entries.keys().next();
    if (!oldest.done) entries.delete(oldest.value);
  }

  return {
    lockedFor(address) {
      const key = clientKey(address);
      const entry = entries.get(key);
      if (!entry || entry.lockedUntil === 0) return 0;
      const left = entry.lockedUntil - now();
      if (left > 0) return left;
      // The lock-out is over: the address starts again from no wrong tries.
      entries.delete(key);
      return 0;
    },
    fail(address) {
      const key = clientKey(address);
      const t = now();
      const entry = entries.get(key) ?? { times: [], lockedUntil: 0 };
      entries.delete(key);
      if (entry.lockedUntil > t) {
        entries.set(key, entry);
        return false;
      }
      if (entries.size >= maxAddresses) forgetOne(t);
      const times = [...entry.times.filter((time) => time > t - windowMs), t].slice(-failures);
      const locked = times.length >= failures;
      entries.set(key, { times: locked ? [] : times, lockedUntil: locked ? t + lockMs : 0 });
      if (locked) {
        // Once per lock-out, with the address counted and never what was tried.
        options.logger?.warn(
          { address, counted: key, failures, windowSeconds: windowMs / SECOND, lockedSeconds: lockMs / SECOND },
          'dashboard login locked out for an address after repeated wrong credentials',
        );
      }
      return locked;
    },
    get size() {
      return entries.size;
    },
  };
}
