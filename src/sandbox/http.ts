/** Small node:http helpers: JSON answers, Error objects and a bounded body reader. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiErrorBody } from '../domain/gateway.js';

/** The gateway publishes no size limit; 1 MB is far above any real request. */
export const MAX_BODY_BYTES = 1024 * 1024;

export function sendJsonText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

export function sendError(res: ServerResponse, status: number, error: ApiErrorBody, headers?: Record<string, string>): void {
  sendJson(res, status, error, headers);
}

/** Raw bytes with their type, e.g. a file download. */
export function sendBytes(res: ServerResponse, status: number, bytes: Buffer, headers: Record<string, string>): void {
  res.writeHead(status, { 'content-length': String(bytes.length), ...headers });
  res.end(bytes);
}

type Refused = { ok: false; error: ApiErrorBody; close: boolean };
export type BodyResult = { ok: true; value: unknown } | Refused;

const TOO_LARGE: Refused = {
  ok: false,
  close: true,
  error: { code: 'validation', message: `The request body is larger than ${MAX_BODY_BYTES} bytes`, target: 'body' },
};

/** Reads a body of at most MAX_BODY_BYTES; a larger one gives the 400 Error object instead. */
export function readRawBody(req: IncomingMessage): Promise<{ ok: true; bytes: Buffer } | Refused> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.off('data', onData);
        req.off('end', onEnd);
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => resolve({ ok: true, bytes: Buffer.concat(chunks, size) });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', reject);
  });
}

/** Reads and parses a JSON body; too large or malformed gives the 400 Error object instead. */
export async function readJsonBody(req: IncomingMessage): Promise<BodyResult> {
  const raw = await readRawBody(req);
  if (!raw.ok) return raw;
  const text = raw.bytes.toString('utf8').replace(/^\uFEFF/, '');
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return {
      ok: false,
      close: false,
      error: { code: 'validation', message: 'The request body is not valid JSON', target: 'body' },
    };
  }
}
