import type { Account } from '../accounts/service';
import { actorLabel } from '../domain/actors';
import { currentActor } from '../events/actingAs';
import { mailHourSpent, openMailHour } from '../mail/allowance';
import type { SigningDeps } from './deps';
import { progressFromDatabase } from '../domain/signingRequests';
import { remindable, remindedWithinTheHour } from './reminders';
import { findPendingSigningRequest } from './store';
import { releaseSignersOutOfTries } from './verification';
import { signingRequestHandle } from './workflow';

/**
 * A reminder round by the request's workflow (sendReminders decides whom, under the hourly limits): 200
 * naming whom it reminded, or a 429 with the rate-limit headers when it could remind nobody. What plainly
 * cannot go (every signer mailed within the hour, or no e-mail left this hour) is refused before the
 * workflow, so that a flood of reminds costs its history nothing. A signer reminded who had spent every
 * wrong code allowed may try again (releaseSignersOutOfTries): the sender's act, never a scheduled reminder's.
 */
export async function remindSigners({ db, temporal, rateLimitMultiplier }: SigningDeps, account: Account, id: string) {
  const remindableNow = async () => {
    const found = await findPendingSigningRequest(db, account.id, id);
    const { waitingFor } = progressFromDatabase(found);
    return remindable(
      found.signers.filter((signer) => waitingFor.includes(signer.id)),
      new Date(),
    );
  };
  const { ready, nextAt } = await remindableNow();
  if (ready.length === 0 && nextAt) throw remindedWithinTheHour(nextAt);
  const hour = await openMailHour(db, account, rateLimitMultiplier, { lock: false });
  if (hour.remaining === 0) {
    // A remind that committed since the signers were read may have spent the hour on these very signers:
    // then they are why nothing goes, as the workflow would say, whichever of two reminds at once came second.
    const again = await remindableNow();
    if (again.ready.length === 0 && again.nextAt) throw remindedWithinTheHour(again.nextAt);
    throw mailHourSpent(account.plan, hour.limit, await hour.fitsAt(1));
  }
  const { remindedSignerIds, limitedBy } = await signingRequestHandle(temporal, id).remind();
  if (remindedSignerIds.length === 0 && limitedBy?.limit === 'signer') throw remindedWithinTheHour(new Date(limitedBy.retryAt));
  if (remindedSignerIds.length === 0 && limitedBy?.limit === 'account') throw mailHourSpent(account.plan, limitedBy.perHour, new Date(limitedBy.retryAt));
  await releaseSignersOutOfTries(db, { requestId: id, signerIds: remindedSignerIds, actor: actorLabel(currentActor(), account.email) });
  return { remindedSignerIds };
}
