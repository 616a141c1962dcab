import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, afterAll } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { logFileName } from '../../src/cli/environment.js';
import { holdBottomLine, writeAbove } from '../../src/cli/terminal.js';

const dir = mkdtempSync(join(tmpdir(), 'realty-log-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Waits for pino's asynchronous file writer. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('a logger with a log file', () => {
  it('writes every line to the file and only warn and above to its destination, redacted in both', async () => {
    const path = join(dir, 'a', 'run.log');
    const shown: string[] = [];
    const opened: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: { write: (line: string) => shown.push(line) },
      file: { path, onOpen: (p) => opened.push(p) },
    });
    logger.info({ sessionId: 'secret-session', row: 1 }, 'deal finished');
    logger.warn({ deal: { ownerSurname: 'Кузнецов' } }, 'breaker open');
    logger.debug('not at this level');
    await settle();
    expect(shown).toHaveLength(1);
    expect(shown[0]).toContain('"msg":"breaker open"');
    const file = readFileSync(path, 'utf8');
    expect(
      file
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ).toEqual(['deal finished', 'breaker open']);
    expect(file).not.toContain('secret-session');
    expect(file).not.toContain('Кузнецов');
    expect(opened).toEqual([path]);
    // Readable by its owner alone: the lines carry deal ids.
    expect(statSync(path).mode & 0o077).toBe(0);
  });

  it('keeps the lines on its destination, once each, when the file cannot be made', async () => {
    const blocker = join(dir, 'blocker');
    writeFileSync(blocker, '');
    const shown: string[] = [];
    const failed: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: { write: (line: string) => shown.push(line) },
      // Under a regular file: no folder can be made there.
      file: { path: join(blocker, 'logs', 'run.log'), onError: (p) => failed.push(p) },
    });
    logger.info('deal finished');
    logger.warn('breaker open');
    logger.info('run finished');
    await settle();
    expect(shown.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['deal finished', 'breaker open', 'run finished']);
    expect(failed).toHaveLength(1);
  });

  it('leaves no file when nothing is logged', () => {
    const path = join(dir, 'b', 'quiet.log');
    createLogger({ level: 'info', destination: { write: () => undefined }, file: { path } });
    expect(existsSync(path)).toBe(false);
  });
});

describe('writing above the progress bar', () => {
  /** A terminal stream that keeps what is written, escape codes included. */
  function fakeTerminal() {
    const written: string[] = [];
    const stream = {
      isTTY: true,
      write: (s: string) => {
        written.push(s);
        return true;
      },
    } as unknown as NodeJS.WriteStream;
    return { stream, written };
  }

  it('clears the bar, writes the line, draws the bar again; after the bar lets go, writes the line alone', () => {
    const { stream, written } = fakeTerminal();
    const release = holdBottomLine(stream, { redraw: () => written.push('<bar>') });
    writeAbove('{"level":40}\n', stream);
    // To the first column, the whole line cleared (readline's escape codes), then the line.
    expect(written.join('')).toBe('\x1b[1G\x1b[2K{"level":40}\n<bar>');
    written.length = 0;
    release();
    writeAbove('logs: x\n', stream);
    expect(written).toEqual(['logs: x\n']);
  });
});

describe('the log file name and place', () => {
  it('names the command, the UTC second and the pid', () => {
    expect(logFileName('schedule run', new Date('2026-11-24T21:06:13.456Z'), 4242)).toBe('schedule-run-20261124T210613Z-4242.log');
  });

  it('lives under XDG_STATE_HOME, or ~/.local/state without it; LOG_LEVEL given is noted', () => {
    expect(loadConfig({ XDG_STATE_HOME: '/var/state', HOME: '/home/ops' })).toMatchObject({
      logDir: '/var/state/realty-batch/logs',
      logLevelGiven: false,
    });
    expect(loadConfig({ XDG_STATE_HOME: 'relative', HOME: '/home/ops', LOG_LEVEL: 'info' })).toMatchObject({
      logDir: '/home/ops/.local/state/realty-batch/logs',
      logLevelGiven: true,
    });
  });
});
