/**
 * The signing round trip (issue 25), with the built CLI against the real sandbox (short
 * lives) and Redis, a follower running: `to-sign` downloads what the suspended docflows
 * wait to have signed, with a manifest of initials; the bank's `.sig` files go back with
 * `sign`, which sends the docflows whose files are all signed and says what the others
 * miss; run again, nothing is posted twice; a signature in another deal's folder and a
 * file changed after to-sign are refused with nothing posted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile, type CsvRow } from '../../helpers/csv.js';
import { harness } from '../../helpers/harness.js';
import { TEST_SIGNATURE } from '../../helpers/signatures.js';
import { waitFor } from '../../helpers/wait-for.js';

interface StatusJson {
  states: Record<string, number>;
  waitingFor: Record<string, number>;
}

// No database of the file's own: the commands use their default place, as they did.
const it = harness({ per: 'file', label: 'sign', sandbox: { sessions: ['s'], lifecycleMs: 150, seed: 3 }, engine: 'none' });

describe('the signing round trip', () => {
  let dir: string;
  let sandbox: RunningSandbox;
  const batch = 'sign';
  let env: Record<string, string>;
  let tracker: ChildProcess | undefined;
  const poll = (what: string) => ({ timeoutMs: 60_000, intervalMs: 200, what });

  const status = async (): Promise<StatusJson> => JSON.parse((await runCli(['status', batch, '--json'], env)).stdout) as StatusJson;
  const results = async (): Promise<CsvRow[]> => {
    await runCli(['results', batch, '--out', join(dir, 'results.csv')], env);
    return readCsvFile(join(dir, 'results.csv'));
  };
  const calls = async (operation: string): Promise<number> => {
    const stats = (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as {
      operationCalls: Record<string, Record<string, number>>;
    };
    return Object.values(stats.operationCalls[operation] ?? {}).reduce((a, b) => a + b, 0);
  };
  const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

  // The file's folder, sandbox and env (its prefix), for the helpers below.
  it.beforeAll(({ dir: folder, sandbox: started, env: given }) => {
    dir = folder;
    sandbox = started;
    env = { ...given, LANG: 'C.UTF-8' };
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(() => {
    tracker?.kill('SIGKILL');
  });

  it('downloads what waits for signatures, attaches the signatures once, sends the signed docflows and refuses foreign or changed files', async () => {
    const run = await runCli(
      ['run', 'samples/deals.csv', '--profile', 'samples/bank-profile.json', '--batch', batch, '--out', join(dir, 'run.csv')],
      env,
      120_000,
    );
    expect(run.code).toBe(3);
    tracker = spawn(process.execPath, [CLI, 'track', '--poll-ms', '50'], { cwd: ROOT, env: childEnv(env), stdio: 'ignore' });
    await waitFor(async () => (await status()).waitingFor.signature === 4, poll('four deals waiting for signatures'));
    const suspended = (await results()).filter((r) => r.state === 'suspended' && r.requirement === 'signature');
    expect(suspended).toHaveLength(4);

    // to-sign: every application file, whole, with a manifest that names the signers by initials only.
    const signing = join(dir, 'to-sign');
    const forPerson = join(dir, 'to-sign.csv');
    const first = await runCli(['to-sign', batch, '--dir', signing, '--manifest', forPerson], env, 120_000);
    expect(first.code, first.stderr).toBe(0);
    const manifestText = readFileSync(join(signing, 'manifest.csv'), 'utf8');
    const manifest = readCsvFile(join(signing, 'manifest.csv'));
    // The copy for a person: Russian Excel's form (a BOM, ';', ids kept as text), the same lines.
    const copy = readFileSync(forPerson);
    expect(copy.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(copy.toString('utf8').split('\r\n', 1)[0]).toBe('\ufeffdealId;docflowId;signer;role;fileId;file;bytes;sha256');
    expect(readCsvFile(forPerson)).toEqual(manifest);
    expect(Object.keys(manifest[0]!)).toEqual(['dealId', 'docflowId', 'signer', 'role', 'fileId', 'file', 'bytes', 'sha256']);
    expect(new Set(manifest.map((m) => m.dealId))).toEqual(new Set(suspended.map((r) => r.dealId)));
    expect(new Set(manifest.map((m) => m.docflowId))).toEqual(new Set(suspended.map((r) => r.docflowId)));
    for (const m of manifest) {
      expect(m.signer).toMatch(/^(\p{Lu}\. ?)+$/u);
      expect(m.role).not.toBe('');
      const path = join(signing, m.dealId!, m.file!);
      expect(readFileSync(path).subarray(0, 5).toString()).toBe('%PDF-');
      expect(sha256(path)).toBe(m.sha256);
      expect(m.file).toBe(`${m.fileId}.pdf`);
    }
    // Nobody's name: neither the owners' of the input nor the bank's representative.
    const input = readCsvFile('samples/deals.csv').filter((r) => suspended.some((s) => s.dealId === r.dealId));
    const names = input.flatMap((r) => [r.ownerSurname, r.ownerName, r.owner2Surname, r.owner2Name]).concat(['Григорьева', 'Елена']);
    for (const name of names.filter((n): n is string => !!n && n.length > 2)) expect(manifestText).not.toContain(name);
    expect(await calls('file')).toBe(manifest.length);

    // The bank signs: every file of three deals, and one file of the fourth.
    const deals = [...new Set(manifest.map((m) => m.dealId!))].sort();
    const filesOf = (deal: string) => manifest.filter((m) => m.dealId === deal);
    const last = deals[3]!;
    expect(filesOf(last).length).toBeGreaterThan(1);
    const sigOf = (m: CsvRow) => join(signing, m.dealId!, `${m.file!}.sig`);
    for (const deal of deals.slice(0, 3)) for (const m of filesOf(deal)) writeFileSync(sigOf(m), TEST_SIGNATURE);
    const unsignedOfLast = filesOf(last)[0]!;
    for (const m of filesOf(last).slice(1)) writeFileSync(sigOf(m), TEST_SIGNATURE);
    const sigs = manifest.length - 1;

    const sign = await runCli(['sign', batch, '--dir', signing], env, 120_000);
    expect(sign.code, sign.stderr + sign.stdout).toBe(3);
    expect(sign.stdout).toContain(`${sigs} signatures attached, 3 docflows sent (0 before), 1 not sent yet`);
    for (const deal of deals.slice(0, 3)) expect(sign.stdout).toMatch(new RegExp(`^  ${deal} \\(docflow [^)]+\\): sent$`, 'm'));
    expect(sign.stdout).toContain(`${last} (docflow ${unsignedOfLast.docflowId}): not sent: still missing ${unsignedOfLast.file}.sig`);
    expect(await calls('signature')).toBe(sigs);
    expect(await calls('send')).toBe(3);

    // The three sent deals go on to their registration; the fourth still waits for its signature.
    await waitFor(async () => {
      const rows = await results();
      return deals.slice(0, 3).every((deal) => rows.find((r) => r.dealId === deal)?.state === 'completed');
    }, poll('the three signed deals to complete'));
    const after = await waitFor(async () => {
      const s = await status();
      return s.waitingFor.signature === 1 && s;
    }, poll('status to show one deal waiting for signatures'));
    expect(after.states.completed).toBeGreaterThanOrEqual(3);

    // Again: nothing new is posted; the sent deals are not asked about again.
    const gets = await calls('get');
    const again = await runCli(['sign', batch, '--dir', signing], env, 120_000);
    expect(again.code).toBe(3);
    expect(again.stdout).toContain('0 signatures attached, 0 docflows sent (3 before), 1 not sent yet');
    expect(await calls('signature')).toBe(sigs);
    expect(await calls('send')).toBe(3);
    expect(await calls('get')).toBe(gets + 1);

    // A signature moved into another deal's folder: refused, nothing posted for that deal, its own signature included.
    writeFileSync(sigOf(unsignedOfLast), TEST_SIGNATURE);
    const foreign = filesOf(deals[0]!)[0]!;
    renameSync(sigOf(foreign), join(signing, last, `${foreign.file!}.sig`));
    const moved = await runCli(['sign', batch, '--dir', signing], env, 120_000);
    expect(moved.code).toBe(3);
    expect(moved.stdout).toContain(
      `${last} (docflow ${unsignedOfLast.docflowId}): refused: ${last}/${foreign.file}.sig signs ${foreign.file}, a file of deal ${deals[0]}, not of deal ${last}, so nothing is posted for deal ${last}.`,
    );
    expect(await calls('signature')).toBe(sigs);
    rmSync(join(signing, last, `${foreign.file!}.sig`));

    // A .sig that is no signature by its structure (plain text): refused, nothing posted.
    writeFileSync(sigOf(unsignedOfLast), 'signed by me, in words');
    const text = await runCli(['sign', batch, '--dir', signing], env, 120_000);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain(
      `refused: ${last}/${unsignedOfLast.file}.sig is not a detached signature (neither a CMS/PKCS#7 SignedData, DER or PEM, nor an OpenPGP signature), so nothing is posted for deal ${last}.`,
    );
    expect(await calls('signature')).toBe(sigs);
    writeFileSync(sigOf(unsignedOfLast), TEST_SIGNATURE);

    // A file changed after to-sign (same size, one byte other): refused, nothing posted.
    const changed = join(signing, last, unsignedOfLast.file!);
    const bytes = readFileSync(changed);
    bytes[bytes.length - 2] = bytes[bytes.length - 2]! ^ 1;
    writeFileSync(changed, bytes);
    const modified = await runCli(['sign', batch, '--dir', signing], env, 120_000);
    expect(modified.code).toBe(3);
    expect(modified.stdout).toContain(
      `refused: ${last}/${unsignedOfLast.file} changed after to-sign (its sha256 is not the manifest's), so nothing is posted for deal ${last}`,
    );
    expect(await calls('signature')).toBe(sigs);

    // to-sign again: the files already there are not asked for; the sent deals are said to wait no more.
    const files = await calls('file');
    const toSignAgain = await runCli(['to-sign', batch, '--dir', signing], env, 120_000);
    expect(toSignAgain.code).toBe(0);
    expect(toSignAgain.stdout).toContain(`1 docflows wait for signatures; 0 files downloaded, ${filesOf(last).length} already there`);
    expect(await calls('file')).toBe(files);

    // A deal's folder replaced by a link to a folder elsewhere: to-sign writes nothing through it.
    const elsewhere = mkdtempSync(join(tmpdir(), 'realty-elsewhere-'));
    renameSync(join(signing, last), join(elsewhere, 'moved'));
    symlinkSync(join(elsewhere, 'moved'), join(signing, last));
    rmSync(join(elsewhere, 'moved', unsignedOfLast.file!));
    const linked = await runCli(['to-sign', batch, '--dir', signing], env, 120_000);
    expect(linked.code).toBe(3);
    expect(linked.stdout + linked.stderr).toContain(`${join(signing, last)} is not a folder (a link or a file stands there)`);
    expect(existsSync(join(elsewhere, 'moved', unsignedOfLast.file!))).toBe(false);
    rmSync(join(signing, last));
    renameSync(join(elsewhere, 'moved'), join(signing, last));
    rmSync(elsewhere, { recursive: true });

    // The bank's way out: delete the changed file, to-sign brings it back, and the last deal is sent.
    if (existsSync(changed)) rmSync(changed);
    const fetched = await runCli(['to-sign', batch, '--dir', signing], env, 120_000);
    expect(fetched.stdout).toContain(`1 files downloaded, ${filesOf(last).length - 1} already there`);
    expect(sha256(changed)).toBe(unsignedOfLast.sha256);
    const done = await runCli(['sign', batch, '--dir', signing], env, 120_000);
    expect(done.code, done.stdout).toBe(0);
    expect(done.stdout).toContain('1 signatures attached, 1 docflows sent (3 before), 0 not sent yet');
    expect(await calls('signature')).toBe(sigs + 1);
    expect(readdirSync(join(signing, last)).filter((f) => f.endsWith('.part'))).toEqual([]);
    // Personal data (signers' initials, the applications) is its owner's alone.
    for (const file of [join(signing, 'manifest.csv'), join(signing, 'signed.csv'), changed])
      expect((statSync(file).mode & 0o777).toString(8), file).toBe('600');
  }, 240_000);
});
