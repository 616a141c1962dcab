/**
 * Helpers for the sandbox tests: a sandbox per test, JSON calls through undici, and the
 * published examples of the gateway's documentation (test/fixtures/gateway-examples).
 */
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { withPaths } from './json-path.js';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.js';

const EXAMPLES = new URL('../fixtures/gateway-examples/', import.meta.url);

export function readExample<T = unknown>(name: string): T {
  return JSON.parse(readFileSync(new URL(name, EXAMPLES), 'utf8')) as T;
}

export const SESSION = 'demo-session';
export const AUTH = { authorization: `auth.sid ${SESSION}` };

export interface JsonAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  text: string;
}

export async function call(
  sandbox: RunningSandbox,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = AUTH,
): Promise<JsonAnswer> {
  const answer = await request(`${sandbox.url}${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await answer.body.text();
  return {
    status: answer.statusCode,
    headers: answer.headers,
    body: text === '' ? undefined : (JSON.parse(text) as unknown),
    text,
  };
}

export const post = (sandbox: RunningSandbox, path: string, body: unknown, headers?: Record<string, string>) =>
  call(sandbox, 'POST', path, body, headers);

export const DOCFLOW_PATH = '/realty/v1/docflows/encumbrance_request';
export const SUGGEST = '/realty/v1/location/cadastre/suggest';

/** Starts a sandbox for one test and always closes it, whatever the test does. */
export async function withSandbox(options: SandboxOptions, run: (sandbox: RunningSandbox) => Promise<void>): Promise<void> {
  const sandbox = await startSandbox({ registry: [], ...options });
  try {
    await run(sandbox);
  } finally {
    await sandbox.close();
  }
}

type Json = Record<string, unknown>;

/**
 * A deep copy of the published encumbrance request with some paths changed: a value sets
 * it, `undefined` deletes it. Paths are dotted, array items by index: `a.b.0.c`.
 */
export function encumbranceRequest(changes: Record<string, unknown> = {}): Json {
  return withPaths(readExample<Json>('encumbrance-request.json'), changes);
}
