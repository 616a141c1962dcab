/**
 * Redis' MONITOR over a socket of its own, read line by line. ioredis' `monitor()` enters its
 * monitor mode only after the `+OK` has been handled: when other test files keep the shared
 * Redis busy, the first lines can come in the same read as the `+OK` and ioredis takes them
 * for replies to nothing ("Command queue state error", thrown from the socket's handler).
 * Here every line after the `+OK` is a command.
 */
import { connect, type Socket } from 'node:net';
import { REDIS_URL } from './redis.js';

export interface Monitor {
  close(): void;
}

/**
 * The arguments of one MONITOR line (`+1700000000.123456 [0 127.0.0.1:1234] "evalsha" "..."`).
 * Redis writes other bytes than printable ASCII as `\xHH`: each comes back as one character of that
 * code (a UTF-8 text as its bytes), enough to find keys and ASCII values.
 */
export function monitorArgs(line: string): string[] {
  const args: string[] = [];
  let i = line.indexOf('] ');
  if (i < 0) return args;
  i += 2;
  while (i < line.length) {
    if (line[i] !== '"') {
      i++;
      continue;
    }
    let arg = '';
    i++;
    while (i < line.length && line[i] !== '"') {
      if (line[i] === '\\') {
        const next = line[i + 1];
        if (next === 'x') {
          arg += String.fromCharCode(parseInt(line.slice(i + 2, i + 4), 16));
          i += 4;
          continue;
        }
        arg += next === 'n' ? '\n' : next === 'r' ? '\r' : next === 't' ? '\t' : next === 'a' ? '\x07' : next === 'b' ? '\b' : next;
        i += 2;
        continue;
      }
      arg += line[i];
      i++;
    }
    args.push(arg);
    i++;
  }
  return args;
}

/** Resolves once MONITOR is on: `onCommand` gets every command Redis runs from then on. */
export function monitorRedis(onCommand: (args: string[]) => void): Promise<Monitor> {
  const url = new URL(REDIS_URL);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(url.port || 6379), url.hostname);
    let buffered = '';
    let on = false;
    socket.setEncoding('latin1');
    // Before the +OK: the start fails; after it, closing is all that is left to do.
    socket.on('error', reject);
    socket.once('connect', () => socket.write('MONITOR\r\n'));
    socket.on('data', (data: string) => {
      buffered += data;
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!on) {
          if (line !== '+OK') {
            socket.destroy();
            reject(new Error(`MONITOR answered ${line}`));
            return;
          }
          on = true;
          resolve({ close: () => socket.destroy() });
          continue;
        }
        onCommand(monitorArgs(line));
      }
    });
  });
}
