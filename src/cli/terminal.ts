/**
 * Lines written to a terminal while a progress bar holds its bottom line: the bar is
 * cleared, the line written above it, the bar drawn again, so neither breaks the other.
 */
import { clearLine, cursorTo } from 'node:readline';

/** What holds the terminal's bottom line (src/cli/progress.ts's bar). */
export interface BottomLine {
  /** Draws it again, after a line was written above it. */
  redraw(): void;
}

let held: { stream: NodeJS.WriteStream; line: BottomLine } | undefined;

/** The bar takes the bottom line; the returned function gives it back. */
export function holdBottomLine(stream: NodeJS.WriteStream, line: BottomLine): () => void {
  const mine = { stream, line };
  held = mine;
  return () => {
    if (held === mine) held = undefined;
  };
}

/** Writes `text` (whole lines) to stderr, above the bar when one is drawn there. */
export function writeAbove(text: string, stream: NodeJS.WriteStream = process.stderr): void {
  if (held?.stream !== stream) {
    stream.write(text);
    return;
  }
  cursorTo(stream, 0);
  clearLine(stream, 0);
  stream.write(text);
  held.line.redraw();
}
