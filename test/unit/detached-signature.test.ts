/**
 * What passes for a detached signature (src/files/detached-signature.ts): structure only,
 * CMS/PKCS#7 SignedData (DER or PEM) or OpenPGP signature packets, at most 1 MiB. The
 * fixtures are real signatures made with the test key (test/fixtures/signing/README.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, expect } from 'vitest';
import { checkDetachedSignature, MAX_SIGNATURE_BYTES, NOT_A_SIGNATURE } from '../../src/files/detached-signature.js';
import { ROOT } from '../helpers/cli.js';

const fixture = (name: string): Buffer => readFileSync(join(ROOT, 'test', 'fixtures', 'signing', name));
const DER = fixture('agreement.pdf.sig');

/** A BER/DER element: tag, length (short or long form), contents. */
const tlv = (tag: number, ...contents: Buffer[]): Buffer => {
  const body = Buffer.concat(contents);
  const n = body.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
};
const SIGNED_DATA = Buffer.from('06092a864886f70d010702', 'hex');
const DATA = Buffer.from('06092a864886f70d010701', 'hex');
/** A SignedData with a GOST R 34.11-2012 digest OID and made-up signer bytes: the algorithm is never looked at. */
const gostLike = (encapsulated: Buffer, signerInfos: Buffer[]) =>
  tlv(
    0x30,
    SIGNED_DATA,
    tlv(
      0xa0,
      tlv(
        0x30,
        tlv(0x02, Buffer.from([1])),
        tlv(0x31, tlv(0x30, tlv(0x06, Buffer.from('2a850307010102', 'hex')))),
        encapsulated,
        tlv(0x31, ...signerInfos),
      ),
    ),
  );

describe('checkDetachedSignature', () => {
  it('takes real detached CMS signatures, DER and PEM, and real OpenPGP ones, binary and armoured', () => {
    expect(checkDetachedSignature(DER)).toEqual({ ok: true, kind: 'cms' });
    expect(fixture('agreement.pdf.pem.sig').toString('latin1')).toMatch(/^-----BEGIN CMS-----/);
    expect(checkDetachedSignature(fixture('agreement.pdf.pem.sig'))).toEqual({ ok: true, kind: 'cms' });
    const pkcs7 = fixture('agreement.pdf.pem.sig').toString('latin1').replaceAll('CMS-----', 'PKCS7-----').replaceAll('\n', '\r\n');
    expect(checkDetachedSignature(Buffer.from(pkcs7, 'latin1'))).toEqual({ ok: true, kind: 'cms' });
    expect(checkDetachedSignature(fixture('agreement.pdf.gpg.sig'))).toEqual({ ok: true, kind: 'pgp' });
    expect(checkDetachedSignature(fixture('agreement.pdf.asc'))).toEqual({ ok: true, kind: 'pgp' });
    expect(checkDetachedSignature(readFileSync(join(ROOT, 'samples', 'agreement-a.pdf.sig')))).toEqual({ ok: true, kind: 'cms' });
  });

  it('takes any algorithm (a GOST-like SignedData built by hand), and BER indefinite lengths', () => {
    const signer = tlv(0x30, tlv(0x02, Buffer.from([1])), Buffer.from('0400', 'hex'));
    expect(checkDetachedSignature(gostLike(tlv(0x30, DATA), [signer]))).toEqual({ ok: true, kind: 'cms' });
    const inner = gostLike(tlv(0x30, DATA), [signer]).subarray(2 + 2);
    // The outer SEQUENCE with an indefinite length, ended by 00 00.
    const ber = Buffer.concat([
      Buffer.from([0x30, 0x80]),
      SIGNED_DATA,
      Buffer.from([0xa0, 0x80]),
      inner.subarray(inner.indexOf(0x30, 11)),
      Buffer.from([0, 0, 0, 0]),
    ]);
    expect(checkDetachedSignature(ber)).toMatchObject({ ok: true });
  });

  it('refuses plain text, a PDF, a .env, the stand-in the samples used to carry, and an empty file', () => {
    for (const text of [
      'sample detached signature of agreement-a.pdf (not a real one)\n',
      '%PDF-1.4\n1 0 obj <<>> endobj\n',
      'REALTY_SESSION_ID=secret\nREALTY_PASSWORD=x\n',
      '0\x82\x01\x00 a detached CMS signature, for the sandbox',
    ])
      expect(checkDetachedSignature(Buffer.from(text, 'latin1'))).toEqual({ ok: false, problem: NOT_A_SIGNATURE });
    expect(checkDetachedSignature(Buffer.alloc(0))).toEqual({ ok: false, problem: 'is empty' });
  });

  it('refuses a signature that carries the signed content (attached), no signer, another content type, and cut or padded bytes', () => {
    const signer = tlv(0x30, tlv(0x02, Buffer.from([1])));
    const attached = gostLike(tlv(0x30, DATA, tlv(0xa0, tlv(0x04, Buffer.from('%PDF-1.4')))), [signer]);
    expect(checkDetachedSignature(attached)).toMatchObject({ ok: false, problem: expect.stringMatching(/attached/) });
    expect(checkDetachedSignature(gostLike(tlv(0x30, DATA), []))).toEqual({ ok: false, problem: NOT_A_SIGNATURE });
    const enveloped = Buffer.from(DER);
    enveloped[DER.indexOf(SIGNED_DATA) + SIGNED_DATA.length - 1] = 0x03;
    expect(checkDetachedSignature(enveloped)).toEqual({ ok: false, problem: NOT_A_SIGNATURE });
    expect(checkDetachedSignature(DER.subarray(0, DER.length - 1))).toEqual({ ok: false, problem: NOT_A_SIGNATURE });
    expect(checkDetachedSignature(Buffer.concat([DER, Buffer.from([0])]))).toEqual({ ok: false, problem: NOT_A_SIGNATURE });
    const badPem = '-----BEGIN PKCS7-----\nnot base64 at all!\n-----END PKCS7-----\n';
    expect(checkDetachedSignature(Buffer.from(badPem))).toEqual({ ok: false, problem: NOT_A_SIGNATURE });
    const otherPem = `-----BEGIN CERTIFICATE-----\n${DER.toString('base64')}\n-----END CERTIFICATE-----\n`;
    expect(checkDetachedSignature(Buffer.from(otherPem))).toEqual({ ok: false, problem: NOT_A_SIGNATURE });
  });

  it('refuses OpenPGP packets that are not signatures (a public key), and a signature packet cut short', () => {
    const key = fixture('test-signer.pgp-public.asc').toString('latin1').replaceAll('PUBLIC KEY BLOCK', 'SIGNATURE');
    expect(checkDetachedSignature(Buffer.from(key, 'latin1'))).toEqual({ ok: false, problem: NOT_A_SIGNATURE });
    const binary = fixture('agreement.pdf.gpg.sig');
    expect(checkDetachedSignature(binary.subarray(0, binary.length - 3))).toEqual({ ok: false, problem: NOT_A_SIGNATURE });
  });

  it('refuses more than 1 MiB without parsing it', () => {
    expect(MAX_SIGNATURE_BYTES).toBe(1024 * 1024);
    const big = Buffer.concat([DER, Buffer.alloc(MAX_SIGNATURE_BYTES)]);
    expect(checkDetachedSignature(big)).toEqual({ ok: false, problem: 'is over 1 MiB, more than a detached signature holds' });
  });
});
