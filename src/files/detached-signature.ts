/**
 * Whether bytes are a detached signature, by their structure alone: a CMS/PKCS#7 SignedData
 * (DER, BER, or PEM `-----BEGIN PKCS7-----` / `CMS`) with no content of its own, or OpenPGP
 * signature packets (binary, or armoured `-----BEGIN PGP SIGNATURE-----`). No algorithm is
 * looked at, let alone required: banks sign with GOST R 34.10-2012, which Node's crypto does
 * not know, and the gateway checks the signature itself. What this refuses is what cannot be
 * a signature at all: a text file, the PDF itself, a `.env`.
 *
 * The DER reader is the few lines a structure check needs (tag, length, children); the
 * shape checked is RFC 5652's ContentInfo { contentType id-signedData, [0] EXPLICIT
 * SignedData { version, digestAlgorithms SET, encapContentInfo without eContent,
 * [0] certificates?, [1] crls?, signerInfos SET of at least one } }.
 */

/** The most a detached signature may hold: a CMS signature with its certificate chain is a few KiB; 1 MiB leaves room for long chains. */
export const MAX_SIGNATURE_BYTES = 1024 * 1024;

export type SignatureKind = 'cms' | 'pgp';

/** The kind of signature, or why it is none (words that follow the field: `file 1 is not ...`). */
export type SignatureCheck = { ok: true; kind: SignatureKind } | { ok: false; problem: string };

export const NOT_A_SIGNATURE = 'is not a detached signature (neither a CMS/PKCS#7 SignedData, DER or PEM, nor an OpenPGP signature)';

export function checkDetachedSignature(bytes: Uint8Array): SignatureCheck {
  if (bytes.length === 0) return { ok: false, problem: 'is empty' };
  if (bytes.length > MAX_SIGNATURE_BYTES) return { ok: false, problem: 'is over 1 MiB, more than a detached signature holds' };
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const armoured = dearmour(buffer);
  if (armoured === 'bad') return { ok: false, problem: NOT_A_SIGNATURE };
  const { label, der } = armoured ?? { label: undefined, der: buffer };
  // A DER SignedData starts with a SEQUENCE (0x30); an OpenPGP packet's first octet has its top bit set.
  if (label === 'PGP SIGNATURE' || (label === undefined && der[0] !== 0x30))
    return isPgpSignature(der) ? { ok: true, kind: 'pgp' } : { ok: false, problem: NOT_A_SIGNATURE };
  const cms = signedDataShape(der);
  if (cms === 'attached')
    return { ok: false, problem: 'is a CMS signature that holds the signed content itself (attached), not a detached one' };
  return cms === 'detached' ? { ok: true, kind: 'cms' } : { ok: false, problem: NOT_A_SIGNATURE };
}

/** The Content-Type a signature of this kind is uploaded with. */
export function signatureContentType(kind: SignatureKind): string {
  return kind === 'pgp' ? 'application/pgp-signature' : 'application/x-pkcs7-signature';
}

const PEM_LABELS = new Set(['PKCS7', 'CMS', 'PKCS #7 SIGNED DATA', 'PGP SIGNATURE']);

/**
 * A PEM or PGP-armoured text's label and decoded bytes; undefined for bytes that are not
 * armoured at all, 'bad' for an armour that is broken (an unknown label, no end, not base64).
 */
function dearmour(bytes: Buffer): { label: string; der: Buffer } | 'bad' | undefined {
  const text = bytes.toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '');
  const begin = /^\s*-----BEGIN ([A-Z0-9 #]+)-----\r?\n/.exec(text);
  if (!begin) return undefined;
  const label = begin[1]!;
  if (!PEM_LABELS.has(label)) return 'bad';
  const end = text.indexOf(`-----END ${label}-----`, begin[0].length);
  if (end < 0 || text.slice(end + `-----END ${label}-----`.length).trim() !== '') return 'bad';
  let lines = text.slice(begin[0].length, end).split(/\r?\n/);
  if (label === 'PGP SIGNATURE') {
    // Armour headers (`Version: ...`) up to a blank line, then base64, then an optional `=CRC24`.
    const blank = lines.findIndex((line) => line.trim() === '');
    if (blank >= 0 && lines.slice(0, blank).every((line) => /^[\x21-\x39\x3b-\x7e]+: /.test(line))) lines = lines.slice(blank + 1);
    lines = lines.filter((line) => !/^=[A-Za-z0-9+/]{4}\s*$/.test(line));
  }
  const body = lines.join('').replace(/\s+/g, '');
  if (body === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(body)) return 'bad';
  return { label, der: Buffer.from(body, 'base64') };
}

/** `30 06 09 2A 86 48 86 F7 0D 01 07 02`'s value: id-signedData, 1.2.840.113549.1.7.2. */
const SIGNED_DATA_OID = Buffer.from([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]);
/** Nesting a real SignedData never reaches (certificates go about 10 deep). */
const MAX_DEPTH = 64;

interface Tlv {
  /** The identifier octet (high tag numbers are kept as their first octet, 0x1f set). */
  tag: number;
  /** Where the contents start and end. */
  start: number;
  end: number;
  /** Where the next element starts (after an indefinite length's end-of-contents). */
  next: number;
}

class NotDer extends Error {}

/** One element at `at`, inside `limit`; throws NotDer when the bytes are no BER element. */
function element(bytes: Buffer, at: number, limit: number, depth: number): Tlv {
  if (depth > MAX_DEPTH || at + 2 > limit) throw new NotDer();
  const tag = bytes[at]!;
  let p = at + 1;
  if ((tag & 0x1f) === 0x1f) {
    while (p < limit && bytes[p]! & 0x80) p++;
    p++;
  }
  if (p >= limit) throw new NotDer();
  const first = bytes[p++]!;
  if (first === 0x80) {
    // Indefinite length (BER, constructed only): children up to the end-of-contents octets.
    if (!(tag & 0x20)) throw new NotDer();
    const start = p;
    while (!(bytes[p] === 0 && bytes[p + 1] === 0)) p = element(bytes, p, limit, depth + 1).next;
    return { tag, start, end: p, next: p + 2 };
  }
  let length = first;
  if (first & 0x80) {
    const octets = first & 0x7f;
    if (octets > 4 || p + octets > limit) throw new NotDer();
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + bytes[p++]!;
  }
  if (p + length > limit) throw new NotDer();
  return { tag, start: p, end: p + length, next: p + length };
}

function children(bytes: Buffer, parent: Tlv, depth: number): Tlv[] {
  if (!(parent.tag & 0x20)) throw new NotDer();
  const found: Tlv[] = [];
  for (let p = parent.start; p < parent.end;) {
    const child = element(bytes, p, parent.end, depth + 1);
    found.push(child);
    p = child.next;
  }
  return found;
}

/** 'detached' for a well-shaped SignedData without content, 'attached' for one with it, undefined for anything else. */
function signedDataShape(bytes: Buffer): 'detached' | 'attached' | undefined {
  try {
    const info = element(bytes, 0, bytes.length, 0);
    if (info.tag !== 0x30 || info.next !== bytes.length) return undefined;
    const [type, explicit, ...rest] = children(bytes, info, 1);
    if (!type || type.tag !== 0x06 || !bytes.subarray(type.start, type.end).equals(SIGNED_DATA_OID)) return undefined;
    if (!explicit || explicit.tag !== 0xa0 || rest.length > 0) return undefined;
    const wrapped = children(bytes, explicit, 2);
    if (wrapped.length !== 1 || wrapped[0]!.tag !== 0x30) return undefined;
    return signedDataFields(bytes, children(bytes, wrapped[0]!, 3));
  } catch (err) {
    if (err instanceof NotDer) return undefined;
    throw err;
  }
}

/** SignedData's fields: version, digestAlgorithms, encapContentInfo, [0] certificates?, [1] crls?, signerInfos (not empty). */
function signedDataFields(bytes: Buffer, fields: Tlv[]): 'detached' | 'attached' | undefined {
  const [version, digests, encapsulated] = fields;
  if (fields.length < 4 || version!.tag !== 0x02 || digests!.tag !== 0x31 || encapsulated!.tag !== 0x30) return undefined;
  const signerInfos = fields.at(-1)!;
  if (signerInfos.tag !== 0x31 || children(bytes, signerInfos, 4).length === 0) return undefined;
  const optional = fields.slice(3, -1).map((field) => field.tag);
  const known = optional.length === 0 || ['a0', 'a1', 'a0,a1'].includes(optional.map((tag) => tag.toString(16)).join(','));
  if (!known) return undefined;
  // eContentType, and eContent only when the content is inside the signature.
  const content = children(bytes, encapsulated!, 4);
  if (content.length === 0 || content[0]!.tag !== 0x06) return undefined;
  return content.length === 1 ? 'detached' : 'attached';
}

/**
 * OpenPGP (RFC 4880 / 9580): one or more packets, every one a Signature packet (tag 2) of
 * version 3 to 6, exactly filling the bytes. Partial lengths are for data packets only.
 */
function isPgpSignature(bytes: Buffer): boolean {
  let p = 0;
  let packets = 0;
  while (p < bytes.length) {
    const head = bytes[p++]!;
    if (!(head & 0x80)) return false;
    let tag: number;
    let length: number;
    if (head & 0x40) {
      tag = head & 0x3f;
      const first = bytes[p++];
      if (first === undefined) return false;
      if (first < 192) length = first;
      else if (first < 224) {
        if (p >= bytes.length) return false;
        length = ((first - 192) << 8) + bytes[p++]! + 192;
      } else if (first === 255) {
        if (p + 4 > bytes.length) return false;
        length = bytes.readUInt32BE(p);
        p += 4;
      } else return false;
    } else {
      tag = (head >> 2) & 0x0f;
      const octets = [1, 2, 4][head & 0x03];
      if (octets === undefined || p + octets > bytes.length) return false;
      length = bytes.readUIntBE(p, octets);
      p += octets;
    }
    if (tag !== 2 || length < 1 || p + length > bytes.length) return false;
    const version = bytes[p]!;
    if (version < 3 || version > 6) return false;
    p += length;
    packets++;
  }
  return packets > 0;
}
