// The first step of an embedded page. Loading its URL used nothing up: the page posts back to it, and that
// uses it up and starts the signer's session, only from a frame. The browser runs this script in a frame
// only when frame-ancestors let that frame's page hold it, so a post from here comes from an allowed
// origin; loaded on its own (a link preview, an address pasted in a tab) the page posts nothing.
import { startEmbeddedSession, tellAnyParent } from '/sign-assets/embed.js';

const $ = (id) => document.getElementById(id);

/** The page stops before any session: it says why, and the parent hears `type`, if any. */
function stop(title, text, type) {
  $('loading').hidden = true;
  $('outcome-title').textContent = title;
  $('outcome-text').textContent = text;
  $('outcome').hidden = false;
  if (type) tellAnyParent(type);
}

async function startSession() {
  if (window.top === window.self) {
    return stop('Open this page from your application', 'This signing page opens inside the application that sent you here: go back to it to sign.');
  }
  let response;
  try {
    response = await fetch(location.pathname, { method: 'POST', headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' });
  } catch {
    return stop('The connection failed', 'Check your network and reload the page.', 'error');
  }
  if (response.status === 410) {
    return stop(
      'This signing link has expired',
      'It can be used once, within minutes of being made. Reload the page you came from to get a new one.',
      'expired',
    );
  }
  if (!response.ok) return stop('Something went wrong', 'Reload the page you came from to try again.', 'error');
  startEmbeddedSession(await response.json());
  await import('/sign-assets/signing.js');
}

startSession();
