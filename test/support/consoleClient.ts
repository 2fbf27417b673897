import { expect } from 'chai';

/**
 * A browser-like client of the console: keeps cookies, never follows redirects, and reads the CSRF token
 * from each page. `headers` go with every request (e.g. an X-Forwarded-For for an app that trusts it).
 */
export function consoleClient(baseUrl: string, headers: Record<string, string> = {}) {
  const cookies = new Map<string, string>();
  let csrf = '';
  async function request(method: string, path: string, options: { form?: Record<string, string | string[]> } = {}) {
    const sent: Record<string, string> = { Accept: 'text/html', ...headers };
    if (cookies.size) sent.Cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body: string | undefined;
    if (options.form) {
      sent['Content-Type'] = 'application/x-www-form-urlencoded';
      const fields = new URLSearchParams();
      for (const [name, value] of Object.entries(options.form)) for (const one of [value].flat()) fields.append(name, one);
      body = fields.toString();
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers: sent, body, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (value) cookies.set(name, value);
      else cookies.delete(name);
    }
    const text = await response.text();
    csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? csrf;
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') };
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
  };
}

export type ConsoleClient = ReturnType<typeof consoleClient>;

export const newEmail = () => `person-${Math.random().toString(36).slice(2)}@example.com`;
export const PASSWORD = 'correct horse battery';

/** A new free account, signed up through the form and logged in. */
export async function signedUp(baseUrl: string, headers: Record<string, string> = {}) {
  const browser = consoleClient(baseUrl, headers);
  const email = newEmail();
  const response = await browser.submit('/app/signup', '/app/signup', { accountName: 'Acme Ltd', email, password: PASSWORD });
  expect(response.status, response.text).to.equal(303);
  return { browser, email };
}
