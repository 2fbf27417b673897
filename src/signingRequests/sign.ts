import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import { validationError } from '../errors';
import { signatureImageProblem } from '../pdf/signatureImage';
import type { ClientInfo, Signature } from '../domain/signingRequests';
import { checkFieldValues, type GivenValue } from './fieldValues';
import { assertCanAct, type SigningContext } from './links';
import { findSignerUploads } from './uploads';
import { signingRequestHandle } from './workflow';

/** The signer of a link signs: with a typed or drawn signature and the values of their fields, once the workflow has it. */
export async function signRequest(
  { temporal, db }: { temporal: Client; db: Db },
  context: SigningContext,
  input: { signature: Signature; fieldValues?: Record<string, GivenValue> },
  client: ClientInfo,
) {
  // Checked now, not at sealing: a signature that cannot be drawn would leave the request unsealable,
  // and a required field left empty would be sealed empty.
  const imageProblem = input.signature.type === 'drawn' ? signatureImageProblem(input.signature.value) : undefined;
  const uploads = (ids: string[]) => findSignerUploads(db, context.signer.id, ids);
  const fields = await checkFieldValues(context.signer.fields, input.fieldValues ?? {}, context.signer, uploads);
  const problems = [...(imageProblem ? [`signature.value ${imageProblem}`] : []), ...fields.problems];
  if (problems.length > 0) throw validationError(problems);
  assertCanAct(context);
  await signingRequestHandle(temporal, context.request.id).sign({
    signerId: context.signer.id,
    signature: input.signature,
    fieldValues: fields.values,
    hiddenFields: fields.hidden,
    ...client,
  });
}
