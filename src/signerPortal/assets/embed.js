// The embedded page's side of the conversation with the page that frames it. Messages that name the
// request go to the origin that frames this page when it is one of the allowed origins, and to no other:
// never '*'. The page reads which origin that is from location.ancestorOrigins (Chromium, Safari) or
// document.referrer; a browser that tells neither gets each allowed origin as targetOrigin, and delivers
// at most to the one framing the page. Outside a frame, nothing is posted.

/** The embedded session's settings (signing.js), or null on a page opened from an e-mail link and until a session starts. */
export let embedded = null;
let targets = [];

function framingOrigin() {
  if (location.ancestorOrigins && location.ancestorOrigins.length > 0) return location.ancestorOrigins[0];
  try {
    return document.referrer ? new URL(document.referrer).origin : null;
  } catch {
    return null;
  }
}

function targetOrigins() {
  if (!embedded || window.parent === window) return [];
  const framing = framingOrigin();
  if (framing) return embedded.allowedOrigins.includes(framing) ? [framing] : [];
  return embedded.allowedOrigins;
}

/** The session embed-open.js started: from now on the page is for its request and signer, and talks to the allowed origin that frames it. */
export function startEmbeddedSession(settings) {
  embedded = settings;
  targets = targetOrigins();
}

/** Posts signet.signing.<type> to the parent page: ready, viewed, completed, declined, verification_required, expired, error. */
export function tellParent(type) {
  const message = { source: 'signet', version: 1, type: `signet.signing.${type}`, signingRequestId: embedded?.signingRequestId, signerId: embedded?.signerId };
  for (const origin of targets) window.parent.postMessage(message, origin);
}

/**
 * Posts signet.signing.<type> naming nothing (no request, no signer) to whatever page frames this one: for
 * a page that knows nothing of the request (no session, a URL used already), so has nothing to keep to the
 * allowed origins.
 */
export function tellAnyParent(type) {
  if (window.parent !== window) window.parent.postMessage({ source: 'signet', version: 1, type: `signet.signing.${type}` }, '*');
}

/** Sends the signer to `returnUrl` with ?event=…&signing_request_id=…; false when there is none. */
export function goToReturnUrl(returnUrl, event, signingRequestId) {
  if (!returnUrl) return false;
  const url = new URL(returnUrl);
  url.searchParams.set('event', event);
  url.searchParams.set('signing_request_id', signingRequestId);
  location.assign(url.href);
  return true;
}
