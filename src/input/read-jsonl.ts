/** JSON Lines, read as a stream of decoded text. */
import { StringDecoder } from 'node:string_decoder';
import { InputError } from '../errors.js';
import { destroyQuietly, isNestedTooDeep, isRecord, MAX_RECORD_CHARS, NESTED_PROBLEM, type JsonItem } from './json-item.js';

/**
 * JSON Lines: one record per line; blank lines skipped; CRLF accepted. A line
 * that is not JSON, not an object, or nested too deep is yielded with its
 * problem (and its text, not its value) and reading goes on.
 */
export async function* readJsonLines(text: NodeJS.ReadableStream, file: string): AsyncGenerator<JsonItem> {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let line = 0;
  let row = 0;

  const parseLine = (raw: string): JsonItem | undefined => {
    line++;
    if (raw.length > MAX_RECORD_CHARS) throw new InputError(`${file} has a line longer than 16 MiB (line ${line}).`);
    if (raw.charCodeAt(raw.length - 1) === 13) raw = raw.slice(0, -1);
    if (line === 1 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
    // The common line starts with '{': only other lines need the blank test.
    if (raw.charCodeAt(0) !== 123 && raw.trim() === '') return undefined;
    row++;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      return { row, problem: `is not valid JSON (line ${line})`, raw };
    }
    // JSON.parse takes any depth; the rejects writer's JSON.stringify does not: the value is not kept.
    if (isNestedTooDeep(value)) return { row, problem: NESTED_PROBLEM, raw };
    return isRecord(value) ? { row, value, raw } : { row, problem: 'is not an object', raw };
  };

  try {
    for await (const data of text) {
      const chunk = typeof data === 'string' ? data : decoder.write(data);
      let start = 0;
      let end = chunk.indexOf('\n');
      if (end === -1) {
        carry += chunk;
        if (carry.length > MAX_RECORD_CHARS) throw new InputError(`${file} has a line longer than 16 MiB (line ${line + 1}).`);
        continue;
      }
      const head = parseLine(carry + chunk.slice(0, end));
      carry = '';
      if (head) yield head;
      start = end + 1;
      while ((end = chunk.indexOf('\n', start)) !== -1) {
        const item = parseLine(chunk.slice(start, end));
        if (item) yield item;
        start = end + 1;
      }
      carry = chunk.slice(start);
    }
    carry += decoder.end();
    if (carry !== '') {
      const last = parseLine(carry);
      if (last) yield last;
    }
  } finally {
    destroyQuietly(text);
  }
}
