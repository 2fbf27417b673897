import crypto from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { SealService } from '../domain/signingRequests';

// What the seal's two network clients share (timestampAuthority.ts, revocation.ts): the error that says a
// seal must wait for a service, a fetch that a hostile or broken server cannot stall or flood, and the few
// certificate and signature checks both make. Signatures are checked by Node's crypto (OpenSSL); pkijs
// and asn1js only read the ASN.1.

/** A URL as it may be shown or used: without its userinfo (a TSA password must never reach a log). */
export function withoutCredentials(url: string): string {
  // A URL that does not parse may hide its userinfo past a '/': then all up to its last '@' goes.
  const userinfo = URL.canParse(url) ? /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i : /^([a-z][a-z0-9+.-]*:\/\/).*@/i;
  return url.replace(userinfo, '$1');
}

/** Every URL in a text, its userinfo taken out. */
function redact(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/gi, '$1');
}

/** A seal that cannot be made now: the workflow retries it; `service` and `url` say what it waits for. */
export class SealServiceError extends Error {
  readonly service: SealService;
  readonly url: string | undefined;

  constructor(service: SealService, url: string | undefined, message: string) {
    super(redact(message));
    this.name = 'SealServiceError';
    this.service = service;
    this.url = url === undefined ? undefined : withoutCredentials(url);
  }
}

/** Why something failed, in a line (a hostile server's bytes may end up here: bounded). */
export function reason(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const text = error instanceof Error ? `${error.message}${cause}` : String(error);
  return redact(text).slice(0, 300);
}

export interface BoundedFetchInit {
  method: 'GET' | 'POST';
  body?: Uint8Array;
  headers?: Record<string, string>;
  timeoutMs: number;
  maxBytes: number;
}

/**
 * POST/GET with a deadline for the whole exchange (a trickling answer counts), at most maxBytes read (the
 * rest refused, connection aborted), HTTP status checked. Credentials in the URL's userinfo go as HTTP
 * Basic auth. Throws an Error saying why (the caller names the URL).
 */
export async function boundedFetch(url: string, init: BoundedFetchInit): Promise<Uint8Array> {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not an http(s) URL');
  const headers: Record<string, string> = { ...init.headers };
  if (parsed.username || parsed.password) {
    const user = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
    headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
    parsed.username = '';
    parsed.password = '';
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), init.timeoutMs);
  try {
    // redirect 'error': an answer from elsewhere than the configured service is no answer.
    const response = await fetch(parsed, {
      method: init.method,
      body: init.body && new Uint8Array(init.body),
      headers,
      signal: controller.signal,
      redirect: 'error',
    });
    if (response.status !== 200) throw new Error(`answered HTTP ${response.status}`);
    return await readBounded(response, init.maxBytes);
  } catch (error) {
    if (controller.signal.aborted) throw new Error(`no complete answer within ${init.timeoutMs} ms`);
    throw error;
  } finally {
    clearTimeout(timer);
    // Whatever was not read is not wanted: close the connection rather than drain it.
    controller.abort();
  }
}

async function readBounded(response: Response, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = () => new Error(`the answer is larger than ${maxBytes} bytes`);
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge();
  if (!response.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new Uint8Array(Buffer.concat(chunks, length));
}

/** One DER value that fills `bytes` exactly (trailing bytes are refused: nothing rides along unchecked). */
export function parseDer(bytes: Uint8Array, what: string): asn1js.AsnType {
  const parsed = asn1js.fromBER(new Uint8Array(bytes));
  if (parsed.offset === -1 || parsed.offset !== bytes.byteLength) throw new Error(`the answer is not one DER ${what}`);
  return parsed.result;
}

/** A certificate as both libraries see it: pkijs for its extensions, Node's crypto for its signatures. */
export interface KnownCertificate {
  pki: pkijs.Certificate;
  x509: crypto.X509Certificate;
}

/** A certificate from its DER (pkijs re-encodes only the outer SEQUENCE: the signed part keeps its bytes). */
const parsed = new Map<string, KnownCertificate>();

/** A certificate read both ways, once: a seal reads the same few again and again (its chains, the authorities'). */
export function knownCertificate(der: Uint8Array | ArrayBuffer): KnownCertificate {
  const key = crypto.createHash('sha256').update(new Uint8Array(der)).digest('base64');
  const known = parsed.get(key);
  if (known) return known;
  const pki = pkijs.Certificate.fromBER(new Uint8Array(der));
  const read = { pki, x509: new crypto.X509Certificate(Buffer.from(pki.toSchema().toBER(false))) };
  if (parsed.size >= 256) parsed.clear(); // bounded: an attacker's answers may carry many
  parsed.set(key, read);
  return read;
}

/** `the certificate "CN" (serial 0a1b…)`: what an error calls a certificate. */
export function certificateName(certificate: pkijs.Certificate): string {
  const cn = certificate.subject.typesAndValues.find((part) => part.type === '2.5.4.3')?.value.valueBlock.value;
  const serial = Buffer.from(certificate.serialNumber.valueBlock.valueHexView).toString('hex');
  return `the certificate ${typeof cn === 'string' ? JSON.stringify(cn) : '(no common name)'} (serial ${serial})`;
}

/** Whether `at` lies within the certificate's validity. */
export function validAt(certificate: pkijs.Certificate, at: Date): boolean {
  return certificate.notBefore.value <= at && at <= certificate.notAfter.value;
}

/** The extended key usages and whether the extension is critical, or undefined without one. */
export function extendedKeyUsage(certificate: pkijs.Certificate): { usages: string[]; critical: boolean } | undefined {
  const extension = certificate.extensions?.find((candidate) => candidate.extnID === '2.5.29.37');
  if (!extension) return undefined;
  const parsed = extension.parsedValue as pkijs.ExtKeyUsage | undefined;
  return { usages: parsed?.keyPurposes ?? [], critical: extension.critical };
}

/** The URIs among general names (an access location, a distribution point). */
export function uris(generalNames: pkijs.GeneralName[] | undefined): string[] {
  return (generalNames ?? []).filter((name) => name.type === 6 && typeof name.value === 'string').map((name) => name.value as string);
}

/** Node's names for the signature algorithms a TSA, an OCSP responder or a CA may use. */
const SIGNATURE_HASHES: Record<string, string | null> = {
  '1.2.840.113549.1.1.5': 'sha1', // sha1WithRSAEncryption
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.1': 'sha1', // ecdsa-with-SHA1
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null, // Ed25519 hashes internally
};

/** Node's names for digest algorithms, by OID. */
export const DIGESTS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/**
 * Whether `signature` over `data` checks with the certificate's key. `digest` is the hash a CMS signer
 * names apart from its signature algorithm (rsaEncryption there means PKCS#1 v1.5 with that hash).
 */
export function signatureChecks(
  data: Uint8Array,
  signature: Uint8Array,
  algorithm: pkijs.AlgorithmIdentifier,
  signer: crypto.X509Certificate,
  digest?: string,
): boolean {
  const id = algorithm.algorithmId;
  try {
    if (id === '1.2.840.113549.1.1.10') return pssChecks(data, signature, algorithm, signer);
    const hash = id === '1.2.840.113549.1.1.1' ? digest : SIGNATURE_HASHES[id];
    if (hash === undefined) throw new Error(`unsupported signature algorithm ${id}`);
    return crypto.verify(hash, data, signer.publicKey, signature);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('unsupported')) throw error;
    return false; // a key that does not fit the algorithm, a malformed signature: it does not check
  }
}

function pssChecks(data: Uint8Array, signature: Uint8Array, algorithm: pkijs.AlgorithmIdentifier, signer: crypto.X509Certificate) {
  const params = new pkijs.RSASSAPSSParams({ schema: algorithm.algorithmParams });
  const hash = DIGESTS[params.hashAlgorithm.algorithmId];
  if (!hash) throw new Error(`unsupported RSA-PSS hash ${params.hashAlgorithm.algorithmId}`);
  const key = { key: signer.publicKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: params.saltLength };
  return crypto.verify(hash, data, key, signature);
}

/** The bytes of a BIT STRING or OCTET STRING value (a signature). */
export function bytesOf(value: asn1js.BitString | asn1js.OctetString): Uint8Array {
  return new Uint8Array(value.valueBlock.valueHexView);
}
