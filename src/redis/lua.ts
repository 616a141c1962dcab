/**
 * Lua scripts sent by their SHA1 (EVALSHA), and in full once when the server has
 * not seen them (a new or restarted server): no per-call script text on the wire,
 * and no `defineCommand` on a connection BullMQ shares (every pipeline made on it
 * copies each defined command).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RedisClient as Redis } from './connection.js';

type Arg = string | number;

export interface LuaScript {
  readonly sha: string;
  readonly source: string;
  run(redis: Redis, keys: readonly string[], args: readonly Arg[]): Promise<unknown>;
}

const isNoScript = (err: unknown): boolean => err instanceof Error && err.message.startsWith('NOSCRIPT');

/**
 * ioredis aborts the unanswered rest of a pipeline when the connection drops (a single
 * command it sends again once Redis is back): such a call is made again on its own.
 * Every script here may run twice (reads, or writes of the same values).
 */
const isAborted = (err: unknown): boolean =>
  err instanceof Error && (err.name === 'AbortError' || err.message.startsWith('Command aborted'));

export function luaScript(source: string): LuaScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return {
    sha,
    source,
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (err) {
        if (!isNoScript(err)) throw err;
        return redis.eval(source, keys.length, ...keys, ...args);
      }
    },
  };
}

/** The scripts' folder: each `<name>.lua` says what it takes and gives in its header (BullMQ's form). */
const LUA_DIR = new URL('./lua/', import.meta.url);
const INCLUDE = /^--- @include "([^"]+)"$/gm;
const HEADER = /^--\[\[[\s\S]*?\]\]\n/;

/** A script's text, each `--- @include "includes/<name>"` line replaced by that file once. */
export function luaText(name: string, included: Set<string> = new Set()): string {
  // The header says what the script takes and gives, for people: it is not sent.
  const text = readFileSync(new URL(`${name}.lua`, LUA_DIR), 'utf8').replace(HEADER, '');
  return text.replace(INCLUDE, (_line, include: string) => {
    if (included.has(include)) return '';
    included.add(include);
    return luaText(include, included);
  });
}

/** The script of `src/redis/lua/<name>.lua`, read once when its module loads. */
export function luaFile(name: string): LuaScript {
  return luaScript(luaText(name));
}

/** Runs a script; calls made in one turn of the event loop go out together. */
export type ScriptRunner = (script: LuaScript, keys: readonly string[], args: readonly Arg[]) => Promise<unknown>;

interface Pending {
  script: LuaScript;
  keys: readonly string[];
  args: readonly Arg[];
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * The scripts run during one turn of the event loop leave in one pipeline: one socket
 * write for all the jobs whose answers came in together, where each command alone
 * costs a write of its own (a system call: the worker's largest single cost in the
 * bench's profile). Unlike ioredis' auto-pipelining, a batch does not wait for the
 * previous one to be answered. Every key shares the `{prefix}` hash tag, so a batch
 * is also one pipeline on a cluster.
 */
export function createScriptBatcher(redis: Redis): ScriptRunner {
  let queued: Pending[] = [];

  const flush = (): void => {
    const batch = queued;
    queued = [];
    const pipeline = redis.pipeline();
    for (const p of batch) pipeline.evalsha(p.script.sha, p.keys.length, ...p.keys, ...p.args);
    const alone = (p: Pending): void => void p.script.run(redis, p.keys, p.args).then(p.resolve, p.reject);
    pipeline.exec().then(
      (replies) => {
        batch.forEach((p, i) => {
          const [err, value] = replies?.[i] ?? [new Error('no reply in the pipeline'), undefined];
          if (!err) p.resolve(value);
          else if (isNoScript(err) || isAborted(err)) alone(p);
          else p.reject(err);
        });
      },
      // The whole pipeline failed to go out: each call on its own, as if never batched.
      () => batch.forEach(alone),
    );
  };

  return (script, keys, args) =>
    new Promise((resolve, reject) => {
      if (queued.length === 0) setImmediate(flush);
      queued.push({ script, keys, args, resolve, reject });
    });
}
