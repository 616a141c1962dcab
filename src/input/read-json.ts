/**
 * Reads JSON and JSON Lines exports record by record from a stream of decoded
 * text, in bounded memory: a JSON file is tokenized by stream-json and each
 * record assembled on its own; a JSON Lines file is split into lines here.
 */
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { jsonParser, type Token } from 'stream-json/parser.js';
import { jsonVerifier } from 'stream-json/utils/verifier.js';
import { InputError } from '../errors.js';
import { destroyQuietly, isRecord, MAX_RECORD_CHARS, type JsonItem } from './json-item.js';

export { flattenRecord, type JsonItem } from './json-item.js';
export { readJsonLines } from './read-jsonl.js';


/** Deeper than any deal record needs; a bound, so hostile nesting costs neither stack nor heap. */
const MAX_DEPTH = 64;
/** One record (a JSON item, a JSONL line) may hold this many characters: memory stays bounded on a runaway value. */
/** stream-chain's "flush" marker (`none`, a registered symbol): the tokenizer reports a value cut short. */
const FLUSH = Symbol.for('object-stream.none');
/** Longer than the 16 characters stream-json waits for before it judges a literal. */
const PADDING = ' '.repeat(32);

type Container = Record<string, unknown> | unknown[];
type Phase = 'start' | 'top' | 'dealsValue' | 'skipValue' | 'skipping' | 'records' | 'item' | 'end';

/**
 * A top-level array of records, or an object whose "deals" key holds that array
 * (other keys skipped). Anything else ends the iteration with an InputError.
 */
export async function* readJsonRecords(text: NodeJS.ReadableStream, file: string): AsyncGenerator<JsonItem> {
  const tokenize = jsonParser({ streamValues: false });
  const builder = new RecordBuilder(file);
  const items: JsonItem[] = [];
  const decoder = new StringDecoder('utf8');
  let first = true;
  /** Characters fed since the tokenizer and the record being assembled last let go of what they hold. */
  let span = 0;
  try {
    for await (const data of text) {
      let chunk = typeof data === 'string' ? data : decoder.write(data);
      if (first && chunk.length > 0) {
        first = false;
        if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
      }
      const started = builder.started;
      let tokens: Token[];
      try {
        tokens = tokensOf(tokenize(chunk));
      } catch (err) {
        throw await syntaxError(file, builder, err);
      }
      builder.consume(tokens, items);
      if (builder.phase === 'item') span = builder.started === started ? span + chunk.length : 0;
      else span = tokens.length === 0 ? span + chunk.length : 0;
      if (span > MAX_RECORD_CHARS) throw builder.tooLargeError();
      for (const item of items) yield item;
      items.length = 0;
    }
    let tokens: Token[];
    try {
      // The tokenizer holds back a short lexeme at the end of its input ("tru}") in case more follows:
      // trailing whitespace makes it decide, so that a bad literal is a syntax error and not a cut.
      tokens = tokensOf(tokenize(decoder.end() + PADDING));
    } catch (err) {
      throw await syntaxError(file, builder, err);
    }
    builder.consume(tokens, items);
    for (const item of items) yield item;
    items.length = 0;
    try {
      tokens = tokensOf(tokenize(FLUSH as unknown as string));
    } catch (err) {
      throw builder.phase === 'start' ? builder.emptyError() : builder.truncatedError(err);
    }
    builder.consume(tokens, items);
    for (const item of items) yield item;
    if (builder.phase === 'start') throw builder.emptyError();
    if (builder.phase !== 'end') throw builder.truncatedError();
  } finally {
    destroyQuietly(text);
  }
}

function tokensOf(out: ReturnType<ReturnType<typeof jsonParser>>): Token[] {
  return typeof out === 'symbol' ? [] : out.values;
}

/** Turns stream-json tokens into records, keeping the nesting depth bounded. */
class RecordBuilder {
  phase: Phase = 'start';
  /** Rows read so far: the current item's row while one is being assembled. */
  row = 0;
  /** Items begun so far: tells whether a chunk both began and ended inside the same record. */
  started = 0;
  private depth = 0;
  private seenDeals = false;
  private current: Container | undefined;
  private key: string | undefined;
  private readonly stack: Array<Container | string | undefined> = [];

  constructor(private readonly file: string) {}

  consume(tokens: Token[], items: JsonItem[]): void {
    for (const token of tokens) {
      if (this.phase === 'item') {
        switch (token.name) {
          case 'keyValue':
            this.key = token.value;
            continue;
          case 'stringValue':
            this.save(token.value);
            continue;
          case 'numberValue':
            this.save(Number(token.value));
            continue;
          case 'nullValue':
          case 'trueValue':
          case 'falseValue':
            this.save(token.value);
            continue;
          case 'startObject':
          case 'startArray':
            this.enter();
            this.stack.push(this.current, this.key);
            this.current = token.name === 'startObject' ? {} : [];
            this.key = undefined;
            continue;
          case 'endObject':
          case 'endArray': {
            this.depth--;
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
            continue;
          }
          default:
            continue;
        }
      }
      this.step(token, items);
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
        if (token.name === 'keyValue') {
          if (token.value !== 'deals') this.phase = 'skipValue';
          else if (this.seenDeals) throw new InputError(`${this.file} has the key "deals" more than once.`);
          else this.phase = 'dealsValue';
        } else if (token.name === 'endObject') {
          if (!this.seenDeals) throw new InputError(`${this.file} is an object without a "deals" array: it holds no deals.`);
          this.depth--;
          this.phase = 'end';
        }
        return;
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
        if (token.name === 'endArray') {
          this.depth--;
          this.phase = this.depth === 0 ? 'end' : 'top';
        } else if (opens) {
          this.row++;
          this.started++;
          this.enter();
          this.current = token.name === 'startObject' ? {} : [];
          this.key = undefined;
          this.phase = 'item';
        } else if (token.name !== 'keyValue') {
          this.row++;
          items.push(this.item(token.name === 'numberValue' ? Number(token.value) : (token as { value: unknown }).value));
        }
        return;
      default:
        return;
    }
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) {
      const where = this.phase === 'item' ? ` (record ${this.row})` : '';
      throw new InputError(`${this.file} is nested more than ${MAX_DEPTH} levels deep${where}.`);
    }
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
    if (this.phase === 'item') return `in record ${this.row}`;
    return this.row === 0 ? 'before the first record' : `after record ${this.row}`;
  }

  emptyError(): InputError {
    return new InputError(`${this.file} is empty: a JSON array of deals or an object with a "deals" array is expected.`);
  }

  tooLargeError(): InputError {
    return new InputError(
      this.phase === 'item'
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

/**
 * stream-json's tokenizer says what it expected but not where; its verifier says
 * where. A syntax error ends the read anyway, so the file is read again up to
 * the error to say where. Read as latin1, one character per byte: the JSON
 * structure is ASCII in every accepted encoding, so the offset is in bytes.
 */
async function syntaxError(file: string, builder: RecordBuilder, cause: unknown): Promise<InputError> {
  const detail = String((cause as Error).message ?? cause).replace(/^Parser cannot parse input: /, '');
  // The tokens of the chunk that failed are lost: the records yielded so far are a lower bound.
  let where = builder.row === 0 ? '' : ` after record ${builder.row}`;
  try {
    const position = await locateSyntaxError(file);
    if (position) where = ` at line ${position.line}, column ${position.pos} (byte ${position.offset})`;
  } catch {
    // Not a file that can be read again (a test's stream): the record count has to do.
  }
  return new InputError(`${file} is not valid JSON${where}: ${detail}.`, { cause });
}

async function locateSyntaxError(file: string): Promise<{ line: number; pos: number; offset: number } | undefined> {
  const verify = jsonVerifier();
  const source = createReadStream(file, { encoding: 'latin1' });
  let first = true;
  let bomBytes = 0;
  try {
    for await (const data of source) {
      let chunk = data as string;
      if (first && chunk.startsWith('\u00ef\u00bb\u00bf')) {
        chunk = chunk.slice(3);
        bomBytes = 3;
      }
      first = false;
      verify(chunk);
    }
    verify(PADDING);
    verify(FLUSH as unknown as string);
  } catch (err) {
    const { line, pos, offset } = err as { line?: unknown; pos?: unknown; offset?: unknown };
    if (typeof line === 'number' && typeof pos === 'number' && typeof offset === 'number') return { line, pos, offset: offset + bomBytes };
  } finally {
    source.destroy();
  }
  return undefined;
}

