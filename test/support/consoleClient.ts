import { expect } from 'chai';
import { sharedSystem } from './system';

/** What a request sends besides its method and path; `headers` go after the client's own. */
export interface ConsoleRequestOptions {
  /** An URL-encoded form (a list is one field sent several times). */
  form?: Record<string, string | string[]>;
  /** A JSON body, sent and asked for as JSON (as the console's scripts do). */
  json?: unknown;
  /** A multipart body (an upload). */
  body?: FormData;
  headers?: Record<string, string>;
}

/**
 * A browser-like client of the console: keeps cookies, never follows redirects, and reads the CSRF token
 * from each page. `headers` go with every request (e.g. an X-Forwarded-For for an app that trusts it).
 */
export function consoleClient(baseUrl: string, headers: Record<string, string> = {}) {
  const cookies = new Map<string, string>();
  let csrf = '';
  async function request(method: string, path: string, options: ConsoleRequestOptions = {}) {
    const sent: Record<string, string> = { Accept: 'text/html', ...headers, ...options.headers };
    if (cookies.size) sent.Cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body: BodyInit | undefined = options.body;
    if (options.form) {
      sent['Content-Type'] = 'application/x-www-form-urlencoded';
      const fields = new URLSearchParams();
      for (const [name, value] of Object.entries(options.form)) for (const one of [value].flat()) fields.append(name, one);
      body = fields.toString();
    }
    if (options.json !== undefined) {
      sent['Content-Type'] = 'application/json';
      sent.Accept = 'application/json';
      body = JSON.stringify(options.json);
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers: sent, body, redirect: 'manual' });
    const setCookies = response.headers.getSetCookie();
    for (const cookie of setCookies) {
      const [pair] = cookie.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (value) cookies.set(name, value);
      else cookies.delete(name);
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    const text = bytes.toString();
    csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf;
    const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
    return {
      status: response.status,
      headers: response.headers,
      text,
      bytes,
      /** The body parsed, when the answer is JSON; otherwise undefined. */
      json: (isJson ? JSON.parse(text) : undefined) as any,
      setCookies,
      location: response.headers.get('location'),
    };
  }
  return {
    request,
    cookies,
    get csrf() {
      return csrf;
    },
    /** Loads the form's page (for its token), then posts the form with it. */
    async submit(formPath: string, action: string, fields: Record<string, string | string[]>) {
      await request('GET', formPath);
      return request('POST', action, { form: { _csrf: csrf, ...fields } });
    },
    /** Posts a form with the token of the last page loaded. */
    post(action: string, fields: Record<string, string | string[]> = {}) {
      return request('POST', action, { form: { _csrf: csrf, ...fields } });
    },
    /** A JSON post as templateEditor.js makes it: with the page's token in X-CSRF-Token. */
    postJson(path: string, json: unknown) {
      return request('POST', path, { json, headers: { 'X-CSRF-Token': csrf } });
    },
  };
}

export type ConsoleClient = ReturnType<typeof consoleClient>;

export const newEmail = () => `person-${Math.random().toString(36).slice(2)}@example.com`;
export const PASSWORD = 'correct horse battery';

/** The path of the newest link under `pathStart` (e.g. /app/email/verify/) e-mailed to this address, read from the outbox. */
export async function mailedLink(email: string, pathStart: string) {
  const db = (await sharedSystem()).database.knex;
  const mails = await db('mail_outbox').where('to_address', email).orderBy('id', 'desc');
  const link = mails.map((mail) => new RegExp(`https?://[^/\\s]+(${pathStart}[\\w-]{43})\\b`).exec(mail.text)?.[1]).find(Boolean);
  expect(link, `a link to ${pathStart} e-mailed to ${email}`).to.be.a('string');
  return link!;
}

/**
 * A new free account, signed up through the form and logged in; its address confirmed through the link
 * e-mailed to it (as its owner would), unless `verify` is false.
 */
export async function signedUp(baseUrl: string, headers: Record<string, string> = {}, accountName = 'Acme Ltd', { verify = true } = {}) {
  const browser = consoleClient(baseUrl, headers);
  const email = newEmail();
  const response = await browser.submit('/app/signup', '/app/signup', { accountName, email, password: PASSWORD });
  expect(response.status, response.text).to.equal(303);
  if (verify) {
    const confirmed = await browser.request('GET', await mailedLink(email, '/app/email/verify/'));
    expect(confirmed.status, confirmed.text).to.equal(200);
  }
  return { browser, email };
}

/** A PDF uploaded as the documents page does it (the token in X-CSRF-Token); answers the new document. */
export async function uploadPdf(browser: ConsoleClient, pdf: Uint8Array, fileName = 'contract.pdf') {
  await browser.request('GET', '/app/documents');
  const body = new FormData();
  body.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), fileName);
  const response = await browser.request('POST', '/app/documents', { body, headers: { Accept: 'application/json', 'X-CSRF-Token': browser.csrf } });
  expect(response.status, response.text).to.equal(201);
  return response.json as { id: string; sha256: string; fileName: string };
}
