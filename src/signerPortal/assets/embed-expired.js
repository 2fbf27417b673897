// An embedded URL used already, or too late: the page knows nothing of the request, so it only tells its parent `expired`.
import { tellAnyParent } from '/sign-assets/embed.js';

tellAnyParent('expired');
