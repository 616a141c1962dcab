/** What the JSON and JSON Lines readers share: the item they yield and small helpers. */

export interface JsonItem {
  /** 1-based position of the record in the file (for JSONL: counting non-blank lines; for JSON: array index + 1). */
  row: number;
  /** The record as parsed (a plain object) when it is one. */
  value?: Record<string, unknown>;
  /** Set when this record is broken: a JSONL line that is not JSON, or an item that is not an object. It still counts as read. */
  problem?: string;
  /** The record's original text (JSONL: the line as it was, without the newline; JSON: JSON.stringify(value)). */
  raw: string;
}

/** A record (or a line) longer than this stops the file: memory stays bounded. */
export const MAX_RECORD_CHARS = 16 * 1024 * 1024;

/**
 * Levels a record may have, itself the first: a deal is flat (1), 64 is far past
 * any real export. Deeper, it is one refused row: writing it back with
 * JSON.stringify, which recurses, would overflow the stack.
 */
export const MAX_RECORD_DEPTH = 64;
export const NESTED_PROBLEM = `nested deeper than ${MAX_RECORD_DEPTH} levels`;

/** Whether a parsed value has more than MAX_RECORD_DEPTH levels; iterative, and it stops at the first value too deep. */
export function isNestedTooDeep(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [container, depth] = stack.pop()!;
    if (depth > MAX_RECORD_DEPTH) return true;
    const children: unknown[] = Array.isArray(container) ? container : Object.values(container);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * A record's values as the loader's flat text fields. A nested object or array
 * has no text form the bank would recognise: it is reported, not flattened.
 */
export function flattenRecord(value: Record<string, unknown>): {
  fields: Record<string, string>;
  problems: Array<{ field: string; message: string }>;
} {
  const fields: Record<string, string> = {};
  const problems: Array<{ field: string; message: string }> = [];
  for (const key of Object.keys(value)) {
    const v = value[key];
    let text: string;
    if (v === null || v === undefined) text = '';
    else if (typeof v === 'object') {
      problems.push({ field: key, message: `must be text, not ${Array.isArray(v) ? 'an array' : 'an object'}` });
      continue;
    } else if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) {
      // 9007199254740993 arrives as ...992: a dealId or a number of that length must be quoted.
      problems.push({ field: key, message: 'must be text: a number this long loses digits in JSON; put it in quotes' });
      continue;
    } else text = typeof v === 'string' ? v : JSON.stringify(v);
    if (key === '__proto__') Object.defineProperty(fields, key, { value: text, writable: true, enumerable: true, configurable: true });
    else fields[key] = text;
  }
  return { fields, problems };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A consumer that stops early, or an error: release the stream (and, through the decoder, the file). */
export function destroyQuietly(text: NodeJS.ReadableStream): void {
  const stream = text as NodeJS.ReadableStream & { destroy?: () => void; destroyed?: boolean };
  if (typeof stream.destroy === 'function' && !stream.destroyed) stream.destroy();
}
