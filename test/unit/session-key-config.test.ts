/** REALTY_SESSION_KEY and REALTY_SESSION_KEY_FILE: read only by src/config.ts, a file only when no one else may read it. */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, requireGateway } from '../../src/config.js';

const KEY = 'q3Vq0m3V7rJ1Zl1l9m1WcQ0x8k2H4nYtU5bC6dE7fG8=';
const LOGIN = { REALTY_API_URL: 'https://gw.example', REALTY_LOGIN: 'robot', REALTY_PASSWORD: 'pw-secret', REALTY_ACCOUNT_ID: 'acc' };

describe('the session key', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-session-key-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function keyFile(name: string, text: string, mode: number): Promise<string> {
    const file = join(dir, name);
    await writeFile(file, text);
    await chmod(file, mode);
    return file;
  }

  it('takes REALTY_SESSION_KEY from the environment and hands it to the fleet with the login', () => {
    const config = loadConfig({ ...LOGIN, REALTY_SESSION_KEY: KEY });
    expect(config.sessionKey).toBe(KEY);
    expect(requireGateway(config)).toMatchObject({ credentials: { login: 'robot' }, sessionKey: KEY });
    expect(loadConfig({ ...LOGIN }).sessionKey).toBeUndefined();
    expect(requireGateway(loadConfig({ ...LOGIN }))).not.toHaveProperty('sessionKey');
  });

  it('reads REALTY_SESSION_KEY_FILE of mode 0600 or 0400, its trailing line break dropped', async () => {
    for (const mode of [0o600, 0o400]) {
      const file = await keyFile(`key-${mode.toString(8)}`, `${KEY}\n`, mode);
      expect(loadConfig({ ...LOGIN, REALTY_SESSION_KEY_FILE: file }).sessionKey).toBe(KEY);
    }
  });

  it('refuses a key file others may read or write, in one sentence naming the file and the mode, never the key', async () => {
    for (const mode of [0o644, 0o640, 0o604, 0o660, 0o606]) {
      const file = await keyFile(`open-${mode.toString(8)}`, KEY, mode);
      let message = '';
      try {
        loadConfig({ ...LOGIN, REALTY_SESSION_KEY_FILE: file });
      } catch (err) {
        expect(err).toMatchObject({ code: 'ERR_CONFIG' });
        message = (err as Error).message;
      }
      expect(message).toBe(
        `REALTY_SESSION_KEY_FILE ${file} may be read or written by others (mode 0${mode.toString(8)}): make it 0600 (chmod 600), owned by the user that runs realty-batch.`,
      );
      expect(message).not.toContain(KEY);
    }
  });

  it('refuses a missing file, both variables at once, and a key shorter than 32 characters', async () => {
    expect(() => loadConfig({ ...LOGIN, REALTY_SESSION_KEY_FILE: join(dir, 'none') })).toThrow(
      `REALTY_SESSION_KEY_FILE ${join(dir, 'none')} cannot be read (ENOENT).`,
    );
    const file = await keyFile('both', KEY, 0o600);
    expect(() => loadConfig({ ...LOGIN, REALTY_SESSION_KEY: KEY, REALTY_SESSION_KEY_FILE: file })).toThrow(/are both set/);
    expect(() => loadConfig({ ...LOGIN, REALTY_SESSION_KEY: 'short' })).toThrow(
      'REALTY_SESSION_KEY holds a key shorter than 32 characters: make one with openssl rand -base64 32.',
    );
    const short = await keyFile('short', 'short\n', 0o600);
    expect(() => loadConfig({ ...LOGIN, REALTY_SESSION_KEY_FILE: short })).toThrow(/shorter than 32 characters/);
  });
});
