/**
 * Turns stream-json tokens into the records of a JSON export (a top-level
 * array, or the "deals" array of an object), one at a time. Depth is bounded
 * everywhere: a record nested deeper than MAX_RECORD_DEPTH is yielded as one
 * broken record, its text kept for the rejects file, and reading goes on; the
 * top level or a skipped key nested deeper than MAX_DEPTH stops the file.
 */
import type { Token } from 'stream-json/parser.js';
import { InputError } from '../errors.js';
import { isRecord, MAX_RECORD_DEPTH, NESTED_PROBLEM, type JsonItem } from './json-item.js';

/** Outside the records: the top level, "deals", and skipped keys' values. Deeper, hostile nesting. */
const MAX_DEPTH = 64;

type Container = Record<string, unknown> | unknown[];
type Phase = 'start' | 'top' | 'dealsValue' | 'skipValue' | 'skipping' | 'records' | 'item' | 'deep' | 'end';

const LITERALS: Partial<Record<Token['name'], string>> = { nullValue: 'null', trueValue: 'true', falseValue: 'false' };

export class RecordBuilder {
  phase: Phase = 'start';
  /** Rows read so far: the current item's row while one is being assembled. */
  row = 0;
  /** Items begun so far: tells whether a chunk both began and ended inside the same record. */
  started = 0;
  /** Levels open outside the records. */
  private depth = 0;
  /** Levels open inside the record being read, itself the first. */
  private recordDepth = 0;
  private seenDeals = false;
  private current: Container | undefined;
  private key: string | undefined;
  private readonly stack: Array<Container | string | undefined> = [];
  /** A record too deep: its text, rebuilt from the tokens, for the rejects file. */
  private deepText = '';
  private deepHasItem = false;
  private deepAfterKey = false;

  constructor(private readonly file: string) {}

  /** Whether a record is being read (its characters count towards MAX_RECORD_CHARS). */
  get inRecord(): boolean {
    return this.phase === 'item' || this.phase === 'deep';
  }

  consume(tokens: Token[], items: JsonItem[]): void {
    for (const token of tokens) {
      if (this.phase === 'item') this.build(token, items);
      else if (this.phase === 'deep') this.skipDeep(token, items);
      else this.step(token, items);
    }
  }

  /** A token of the record being assembled. */
  private build(token: Token, items: JsonItem[]): void {
    switch (token.name) {
      case 'keyValue':
        this.key = token.value;
        return;
      case 'stringValue':
        this.save(token.value);
        return;
      case 'numberValue':
        this.save(Number(token.value));
        return;
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        this.save(token.value);
        return;
      case 'startObject':
      case 'startArray':
        if (++this.recordDepth > MAX_RECORD_DEPTH) {
          this.startDeep(token.name === 'startObject' ? '{' : '[');
          return;
        }
        this.stack.push(this.current, this.key);
        this.current = token.name === 'startObject' ? {} : [];
        this.key = undefined;
        return;
      case 'endObject':
      case 'endArray': {
        this.recordDepth--;
        const done = this.current!;
        if (this.stack.length === 0) {
          items.push(this.item(done));
          this.current = undefined;
          this.phase = 'records';
        } else {
          this.key = this.stack.pop() as string | undefined;
          this.current = this.stack.pop() as Container;
          this.save(done);
        }
        return;
      }
      default:
        return;
    }
  }

  /**
   * The record has just gone past MAX_RECORD_DEPTH: what was assembled of it is
   * written out as text (each part is shallow enough for JSON.stringify), and
   * the rest is added token by token, never as values.
   */
  private startDeep(bracket: string): void {
    const levels: Array<[Container, string | undefined]> = [];
    for (let i = 1; i < this.stack.length; i += 2) levels.push([this.stack[i - 1] as Container, this.stack[i] as string | undefined]);
    levels.push([this.current!, this.key]);
    let text = '';
    for (const [container, key] of levels) {
      const inner = JSON.stringify(container).slice(1, -1);
      text +=
        (Array.isArray(container) ? '[' : '{') +
        inner +
        (inner === '' ? '' : ',') +
        (Array.isArray(container) ? '' : `${JSON.stringify(key)}:`);
    }
    this.deepText = text + bracket;
    this.deepHasItem = false;
    this.deepAfterKey = false;
    this.stack.length = 0;
    this.current = undefined;
    this.key = undefined;
    this.phase = 'deep';
  }

  /** A token of a record too deep: its text only. Every level but the innermost already has an item, so one flag will do. */
  private skipDeep(token: Token, items: JsonItem[]): void {
    const separator = (): string => (this.deepHasItem && !this.deepAfterKey ? ',' : '');
    switch (token.name) {
      case 'keyValue':
        this.deepText += `${this.deepHasItem ? ',' : ''}${JSON.stringify(token.value)}:`;
        this.deepHasItem = true;
        this.deepAfterKey = true;
        return;
      case 'startObject':
      case 'startArray':
        this.recordDepth++;
        this.deepText += separator() + (token.name === 'startObject' ? '{' : '[');
        this.deepHasItem = false;
        this.deepAfterKey = false;
        return;
      case 'endObject':
      case 'endArray':
        this.deepText += token.name === 'endObject' ? '}' : ']';
        this.deepHasItem = true;
        this.deepAfterKey = false;
        if (--this.recordDepth === 0) {
          items.push({ row: this.row, problem: NESTED_PROBLEM, raw: this.deepText });
          this.deepText = '';
          this.phase = 'records';
        }
        return;
      case 'stringValue':
      case 'numberValue':
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        this.deepText +=
          separator() +
          (token.name === 'stringValue' ? JSON.stringify(token.value) : token.name === 'numberValue' ? token.value : LITERALS[token.name]);
        this.deepHasItem = true;
        this.deepAfterKey = false;
        return;
      default:
        return;
    }
  }

  /** Everything outside a record: the top level, the "deals" key, skipped keys, scalar items. */
  private step(token: Token, items: JsonItem[]): void {
    const opens = token.name === 'startObject' || token.name === 'startArray';
    const closes = token.name === 'endObject' || token.name === 'endArray';
    switch (this.phase) {
      case 'start':
        if (token.name === 'startArray') this.phase = 'records';
        else if (token.name === 'startObject') this.phase = 'top';
        else throw new InputError(`${this.file} holds ${describe(token)}, not an array of deals or an object with a "deals" array.`);
        this.enter();
        return;
      case 'top':
        return this.stepTop(token);
      case 'dealsValue':
        if (token.name !== 'startArray') throw new InputError(`${this.file} has "deals" that is ${describe(token)}, not an array.`);
        this.seenDeals = true;
        this.enter();
        this.phase = 'records';
        return;
      case 'skipValue':
        if (opens) {
          this.enter();
          this.phase = 'skipping';
        } else this.phase = 'top';
        return;
      case 'skipping':
        if (opens) this.enter();
        else if (closes && --this.depth === 1) this.phase = 'top';
        return;
      case 'records':
        return this.stepRecords(token, opens, items);
      default:
        return;
    }
  }

  /** Inside the top-level object: the "deals" key once, other keys skipped. */
  private stepTop(token: Token): void {
    if (token.name === 'keyValue') {
      if (token.value !== 'deals') this.phase = 'skipValue';
      else if (this.seenDeals) throw new InputError(`${this.file} has the key "deals" more than once.`);
      else this.phase = 'dealsValue';
    } else if (token.name === 'endObject') {
      if (!this.seenDeals) throw new InputError(`${this.file} is an object without a "deals" array: it holds no deals.`);
      this.depth--;
      this.phase = 'end';
    }
  }

  /** Between records of the deals array: a record starts, a scalar item is one refused row, or the array ends. */
  private stepRecords(token: Token, opens: boolean, items: JsonItem[]): void {
    if (token.name === 'endArray') {
      this.depth--;
      this.phase = this.depth === 0 ? 'end' : 'top';
    } else if (opens) {
      this.row++;
      this.started++;
      this.recordDepth = 1;
      this.current = token.name === 'startObject' ? {} : [];
      this.key = undefined;
      this.phase = 'item';
    } else if (token.name !== 'keyValue') {
      this.row++;
      items.push(this.item(token.name === 'numberValue' ? Number(token.value) : (token as { value: unknown }).value));
    }
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new InputError(`${this.file} is nested more than ${MAX_DEPTH} levels deep outside its records.`);
  }

  private save(value: unknown): void {
    const current = this.current!;
    if (Array.isArray(current)) current.push(value);
    else if (this.key === '__proto__') {
      // As JSON.parse does: an own property, never the object's prototype.
      Object.defineProperty(current, this.key, { value, writable: true, enumerable: true, configurable: true });
    } else current[this.key!] = value;
  }

  private item(value: unknown): JsonItem {
    const raw = JSON.stringify(value);
    if (isRecord(value)) return { row: this.row, value, raw };
    return { row: this.row, problem: 'is not an object', raw };
  }

  /** The record being read, or the last one read, for messages. */
  where(): string {
    if (this.inRecord) return `in record ${this.row}`;
    return this.row === 0 ? 'before the first record' : `after record ${this.row}`;
  }

  emptyError(): InputError {
    return new InputError(`${this.file} is empty: a JSON array of deals or an object with a "deals" array is expected.`);
  }

  tooLargeError(): InputError {
    return new InputError(
      this.inRecord
        ? `${this.file} has a record larger than 16 MiB (record ${this.row}).`
        : `${this.file} has a single value larger than 16 MiB (${this.where()}).`,
    );
  }

  truncatedError(cause?: unknown): InputError {
    return new InputError(`${this.file} ends before its JSON is complete (${this.where()}): the file is cut short.`, { cause });
  }
}

const KINDS: Partial<Record<Token['name'], string>> = {
  startObject: 'an object',
  startArray: 'an array',
  stringValue: 'a string',
  numberValue: 'a number',
  nullValue: 'null',
  trueValue: 'a boolean',
  falseValue: 'a boolean',
};

function describe(token: Token): string {
  return KINDS[token.name] ?? token.name;
}
