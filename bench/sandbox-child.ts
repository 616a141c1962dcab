/**
 * The gateway sandbox in a process of its own (`fork`ed by bench/sandbox.ts), so
 * the HTTP server's CPU is not the measured worker's. On request it counts the
 * gateway requests (suggest calls + docflow calls) per wall-clock second, read off
 * its stats every 10 ms: a request lands in the wrong second only when it came
 * within those 10 ms of a boundary.
 */
import { startSandbox, type SandboxConfigPatch, type SandboxStats } from '../src/sandbox/index.js';

export type ChildRequest =
  | { type: 'stats' }
  | { type: 'latency'; ms: number }
  | { type: 'configure'; patch: SandboxConfigPatch }
  | { type: 'track' }
  | { type: 'seconds' };
export type ChildReply =
  | { type: 'ready'; url: string }
  | { type: 'stats'; stats: SandboxStats }
  | { type: 'seconds'; seconds: Array<[number, number]> }
  | { type: 'ok' };

const requests = (s: SandboxStats): number => s.suggestCalls + Object.values(s.docflowCalls).reduce((a, b) => a + b, 0);

const sandbox = await startSandbox({ latencyMs: Number(process.env.BENCH_LATENCY_MS ?? 0) });
const send = (reply: ChildReply): void => void process.send?.(reply);
let tracker: NodeJS.Timeout | undefined;
const perSecond = new Map<number, number>();

process.on('message', (m: ChildRequest) => {
  if (m.type === 'stats') send({ type: 'stats', stats: sandbox.stats() });
  else if (m.type === 'latency') {
    sandbox.configure({ latencyMs: m.ms });
    send({ type: 'ok' });
  } else if (m.type === 'configure') {
    sandbox.configure(m.patch);
    send({ type: 'ok' });
  } else if (m.type === 'track') {
    clearInterval(tracker);
    perSecond.clear();
    let last = requests(sandbox.stats());
    tracker = setInterval(() => {
      const now = requests(sandbox.stats());
      const second = Math.floor(Date.now() / 1000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + now - last);
      last = now;
    }, 10);
    send({ type: 'ok' });
  } else if (m.type === 'seconds') {
    clearInterval(tracker);
    send({ type: 'seconds', seconds: [...perSecond.entries()] });
  }
});
process.on('disconnect', () => void sandbox.close().then(() => process.exit(0)));
send({ type: 'ready', url: sandbox.url });
