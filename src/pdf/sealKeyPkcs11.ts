import crypto from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import type { Pkcs11KeySource, SealKey } from './sealKeySource';

// The seal key on a PKCS#11 token (an HSM): the token signs, the key never leaves it. One session per
// opened key, kept for the process and reopened when it breaks. Cryptoki's state is the process's:
// every thread that loads the module shares it, so a second initialization or login, from another
// thread (the seal thread, say) or another source, finds it done already.

const libraries = new Map<string, pkcs11js.PKCS11>();

function library(module: string): pkcs11js.PKCS11 {
  let lib = libraries.get(module);
  if (!lib) {
    lib = new pkcs11js.PKCS11();
    try {
      lib.load(module);
    } catch (error) {
      throw new Error(`cannot load the PKCS#11 module ${module}: ${messageOf(error)}`);
    }
    libraries.set(module, lib);
  }
  // Every time: a token's library may have been finalized since (by whatever else shares the process).
  try {
    lib.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (error) {
    if (codeOf(error) !== pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw new Error(`cannot initialize the PKCS#11 module ${module}: ${messageOf(error)}`);
  }
  return lib;
}

interface Session {
  handle: Buffer;
  key: Buffer;
}

function openSession(lib: pkcs11js.PKCS11, { tokenLabel, pin, keyLabel }: Pkcs11KeySource['pkcs11']): Session {
  const slot = lib.C_GetSlotList(true).find((slot) => lib.C_GetTokenInfo(slot).label.trimEnd() === tokenLabel);
  if (!slot) throw new Error(`no PKCS#11 token labelled "${tokenLabel}"`);
  const handle = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
  try {
    try {
      lib.C_Login(handle, pkcs11js.CKU_USER, pin);
    } catch (error) {
      const code = codeOf(error);
      if (code === pkcs11js.CKR_PIN_INCORRECT) throw new Error(`the PKCS#11 token "${tokenLabel}" refused the PIN`);
      if (code === pkcs11js.CKR_PIN_LOCKED) throw new Error(`the PIN of the PKCS#11 token "${tokenLabel}" is locked`);
      // Already logged in: by another session of this process (a login is the process's), and then the PIN is not checked again.
      if (code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw new Error(`cannot log in to the PKCS#11 token "${tokenLabel}": ${messageOf(error)}`);
    }
    lib.C_FindObjectsInit(handle, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_RSA },
      { type: pkcs11js.CKA_LABEL, value: keyLabel },
    ]);
    const keys = lib.C_FindObjects(handle, 2);
    lib.C_FindObjectsFinal(handle);
    if (keys.length === 0) throw new Error(`no RSA private key labelled "${keyLabel}" on the PKCS#11 token "${tokenLabel}"`);
    if (keys.length > 1) throw new Error(`more than one RSA private key labelled "${keyLabel}" on the PKCS#11 token "${tokenLabel}"`);
    return { handle, key: keys[0] };
  } catch (error) {
    closeQuietly(lib, handle);
    throw error;
  }
}

function closeQuietly(lib: pkcs11js.PKCS11, handle: Buffer) {
  try {
    lib.C_CloseSession(handle);
  } catch {
    // broken already: nothing to close
  }
}

/** An RSA modulus in hex, without leading zeros. */
const hexOf = (modulus: Buffer) => modulus.toString('hex').replace(/^(00)+/, '');

export async function openPkcs11Key({ pkcs11, certificates }: Pkcs11KeySource): Promise<SealKey> {
  const certs = certificates.map((cert) => Buffer.from(cert));
  if (certs.length === 0) throw new Error('no seal certificate given for the PKCS#11 key');
  const lib = library(pkcs11.module);
  let session: Session | undefined = openSession(lib, pkcs11);
  // A key that is not the certificate's would make seals no one can verify: refuse it now.
  const [{ value: keyModulus }] = lib.C_GetAttributeValue(session.handle, session.key, [{ type: pkcs11js.CKA_MODULUS }]);
  const modulus = hexOf(keyModulus as Buffer);
  if (modulus !== hexOf(Buffer.from(new crypto.X509Certificate(certs[0]).publicKey.export({ format: 'jwk' }).n ?? '', 'base64url'))) {
    closeQuietly(lib, session.handle);
    throw new Error(`the key "${pkcs11.keyLabel}" on the PKCS#11 token "${pkcs11.tokenLabel}" does not match the seal certificate's public key`);
  }

  const signOnce = async (data: Buffer): Promise<Buffer> => {
    const open = (session ??= openSession(library(pkcs11.module), pkcs11));
    try {
      lib.C_SignInit(open.handle, { mechanism: pkcs11js.CKM_SHA256_RSA_PKCS }, open.key); // the token hashes
      // Async: the token's work runs off this thread (a network HSM may take a while).
      return Buffer.from(await lib.C_SignAsync(open.handle, data, Buffer.alloc(modulus.length / 2)));
    } catch (error) {
      // A broken session (handle invalid, token removed, logged out) is reopened by the next signature.
      session = undefined;
      closeQuietly(lib, open.handle);
      throw new Error(`signing with the key "${pkcs11.keyLabel}" on the PKCS#11 token "${pkcs11.tokenLabel}" failed: ${messageOf(error)}`);
    }
  };
  // One operation at a time: a session does not run two signatures at once.
  let queue: Promise<unknown> = Promise.resolve();
  const sign = (data: Buffer) => {
    const signed = queue.then(() => signOnce(data));
    queue = signed.catch(() => undefined);
    return signed;
  };
  return { certificates: certs, sign };
}

const codeOf = (error: unknown) => (error instanceof pkcs11js.Pkcs11Error ? error.code : undefined);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
