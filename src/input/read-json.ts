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
import { destroyQuietly, MAX_RECORD_CHARS, type JsonItem } from './json-item.js';
import { RecordBuilder } from './json-record-builder.js';

export { flattenRecord, type JsonItem } from './json-item.js';
export { readJsonLines } from './read-jsonl.js';

/** stream-chain's "flush" marker (`none`, a registered symbol): the tokenizer reports a value cut short. */
const FLUSH = Symbol.for('object-stream.none');
/** Longer than the 16 characters stream-json waits for before it judges a literal. */
const PADDING = ' '.repeat(32);

/**
 * A top-level array of records, or an object whose "deals" key holds that array
 * (other keys skipped). Anything else ends the iteration with an InputError; a
 * record nested too deep is one broken item (json-record-builder.ts).
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
      if (builder.inRecord) span = builder.started === started ? span + chunk.length : 0;
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
