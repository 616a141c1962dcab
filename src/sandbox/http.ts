/** Small node:http helpers: JSON answers, Error objects and a bounded body reader. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiErrorBody } from '../realty/types.js';

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

export type BodyResult = { ok: true; value: unknown } | { ok: false; error: ApiErrorBody; close: boolean };

const TOO_LARGE: BodyResult = {
  ok: false,
  close: true,
  error: { code: 'validation', message: `The request body is larger than ${MAX_BODY_BYTES} bytes`, target: 'body' },
};

/** Reads and parses a JSON body; too large or malformed gives the 400 Error object instead. */
export function readJsonBody(req: IncomingMessage): Promise<BodyResult> {
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
    const onEnd = (): void => {
      const text = Buffer.concat(chunks, size)
        .toString('utf8')
        .replace(/^\uFEFF/, '');
      try {
        resolve({ ok: true, value: JSON.parse(text) as unknown });
      } catch {
        resolve({
          ok: false,
          close: false,
          error: { code: 'validation', message: 'The request body is not valid JSON', target: 'body' },
        });
      }
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', reject);
  });
}
