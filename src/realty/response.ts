/**
 * What every call of the gateway's client does with an answer, and its deadline: the
 * checks of a body against its schema, the gateway's Error object, the headers read
 * (Retry-After, Content-Disposition), and the reason a call had no answer.
 */
import { EventEmitter } from 'node:events';
import type * as z from 'zod';
import { ApiResponseError } from '../errors.js';
import { apiErrorBodySchema, type ApiErrorBody } from '../domain/gateway.js';

/**
 * A call's abort signal. undici takes an EventEmitter as well as an AbortSignal, and
 * an EventEmitter costs a fraction of an AbortController (an EventTarget with its
 * own bookkeeping): two of them a deal, about 2 % of the worker's CPU in the bench.
 */
export class Deadline extends EventEmitter {
  aborted = false;
  reason: DOMException | undefined;

  expire(): void {
    this.aborted = true;
    this.reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    this.emit('abort');
  }
}

export function checked<S extends z.ZodType>(schema: S, json: unknown, endpoint: string, status: number): z.output<S> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ApiResponseError(endpoint, status, issue ? `${issue.path.join('.') || '(body)'} ${issue.message}` : 'unreadable');
  }
  return parsed.data;
}

export function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The gateway's Error object when the body is one; otherwise a short excerpt as the message. */
export function errorBody(json: unknown, text: string): ApiErrorBody | undefined {
  const parsed = apiErrorBodySchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const excerpt = text.trim().slice(0, 200);
  return excerpt ? { message: excerpt } : undefined;
}

export function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `attachment; filename="x.pdf"`: the name, without any directory part. */
export function fileNameOf(disposition: string | undefined): string | undefined {
  const match = /filename\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(disposition ?? '');
  const name = (match?.[1] ?? match?.[2])?.split(/[\\/]/).pop();
  return name === undefined || name === '' || name === '.' || name === '..' ? undefined : name;
}

/** Retry-After is seconds or an HTTP date (RFC 9110 10.2.3). */
export function retryAfter(value: string | string[] | undefined): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

export function networkReason(err: unknown): string {
  if (err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'TIMEOUT';
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return err instanceof Error ? err.name : 'unknown';
}
