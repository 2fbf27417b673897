// An embedded URL opened again, or too late: the parent hears `expired`, and the frame goes to the return URL, if any.
import { embedded, goToReturnUrl, tellParent } from '/sign-assets/embed.js';

tellParent('expired');
goToReturnUrl(embedded.returnUrl, 'expired', embedded.signingRequestId);
