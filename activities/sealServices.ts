import { ApplicationFailure } from '@temporalio/common';
import { sealServiceUnavailable } from '../src/domain/signingRequests';
import { countSealServiceFailure } from '../src/metrics';
import { SealServiceError } from '../src/pdf/sealServices';

// A seal that waits for a timestamp authority or revocation responder says which, for the workflow's progress and the metrics.
export async function waitingOnSealServices<Result>(work: () => Promise<Result>): Promise<Result> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof SealServiceError)) throw error;
    countSealServiceFailure(error.service);
    throw ApplicationFailure.retryable(error.message, sealServiceUnavailable, { service: error.service, url: error.url ?? null });
  }
}
