/**
 * The reading thread of a load (read-rows.ts, `readChunksInThread`): reads, validates and
 * packs the input's rows and posts them THREAD_POST_ROWS at a time, at most THREAD_AHEAD_POSTS
 * posts ahead of what the load has taken (it posts `more` for each post it takes). Ends with `end`, or with the
 * error that stopped the reading.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openInput } from '../input/open-input.js';
import { THREAD_AHEAD_POSTS, readChunksHere, type ReadOptions, type ThreadMessage } from './read-rows.js';

const port = parentPort!;
const options = workerData as ReadOptions;
let credits = THREAD_AHEAD_POSTS;
let wake: (() => void) | undefined;
port.on('message', () => {
  credits++;
  wake?.();
  wake = undefined;
});
const post = (message: ThreadMessage): void => port.postMessage(message);

try {
  const input = await openInput(options.file, options.reading);
  const chunks = readChunksHere(input, options);
  for (;;) {
    const next = await chunks.next();
    if (next.done) {
      post({ kind: 'end', end: next.value });
      break;
    }
    while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
    credits--;
    post({ kind: 'chunk', chunk: next.value });
  }
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  post({
    kind: 'error',
    error: { name: e?.name ?? 'Error', message: e?.message ?? String(err), ...(typeof e?.code === 'string' && { code: e.code }) },
  });
}
// The port's listener keeps the thread alive until the load ends it (terminate), having read the last message.
