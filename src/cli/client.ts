import fs from 'node:fs';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { type Command, InvalidArgumentError } from 'commander';
import { Signet, SignetError, type SigningRequest } from '../../sdk/src';

// The API client's commands (`signet send`, `status`, `download`): everything through the SDK (sdk/), with
// the key in SIGNET_API_KEY and the service at SIGNET_URL (default http://localhost:3000). Results go to
// stdout as JSON (one line), the progress bar and messages to stderr.

const serviceUrl = () => process.env.SIGNET_URL || 'http://localhost:3000';

function signet() {
  const apiKey = process.env.SIGNET_API_KEY;
  if (!apiKey) throw new Error('SIGNET_API_KEY is not set: an API key, sk_live_… (npx signet account create prints one)');
  return new Signet({ apiKey, baseUrl: serviceUrl() });
}

/** `Ada Lovelace <ada@example.com>` or `ada@example.com` as a signer. */
export function parseRecipient(value: string, previous: { name: string; email: string }[] = []) {
  const match = /^\s*(?:(.*?)\s*<([^<>\s]+@[^<>\s]+)>|([^<>\s]+@[^<>\s]+))\s*$/.exec(value);
  if (!match) throw new InvalidArgumentError('expected "Name <email>" or an e-mail address');
  const email = match[2] ?? match[3];
  const name = match[1]?.replace(/^"(.*)"$/, '$1') || email.split('@')[0];
  return [...previous, { name, email }];
}

const parseSeconds = (value: string) => {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('expected a number of seconds');
  return seconds;
};

const acting = (request: SigningRequest) => request.signers.filter((signer) => signer.recipientType !== 'cc');
const done = (request: SigningRequest) =>
  acting(request).filter(
    (signer) => signer.status === 'signed' || signer.status === 'approved' || (signer.recipientType === 'viewer' && signer.status === 'viewed'),
  ).length;

const summary = (request: SigningRequest) => ({
  id: request.id,
  title: request.title,
  status: request.status,
  stage: request.progress.stage,
  signers: request.signers.map(({ id, name, email, status }) => ({ id, name, email, status })),
  completedAt: request.completedAt,
  sealedSha256: request.sealedSha256,
});

/** Who the request waits for, by name and address: `Ada Lovelace <ada@example.com>`. */
const waitingFor = (request: SigningRequest) =>
  request.signers
    .filter((signer) => request.progress.waitingFor.includes(signer.id))
    .map((signer) => `${signer.name} <${signer.email}>`)
    .join(', ');

const duration = (seconds: number) => (seconds % 60 ? `${seconds} s` : `${seconds / 60} min`);

/**
 * Waits for the request's outcome, at most `timeoutSeconds`, with a progress bar (signers done of those
 * who act) on stderr; first it says whom it waits for, and giving up it says so.
 */
async function waitWithProgress(client: Signet, id: string, timeoutSeconds: number) {
  const bar = new SingleBar(
    { format: 'Waiting for signatures |{bar}| {value}/{total} done · {stage}', stream: process.stderr, hideCursor: true, clearOnComplete: false },
    undefined,
  );
  let started = false;
  try {
    return await client.signingRequests.waitForOutcome(id, {
      timeoutMs: timeoutSeconds * 1000,
      intervalMs: 1000,
      onProgress: (request) => {
        const payload = { stage: request.progress.stage === 'finished' ? request.status : request.progress.stage.replace('_', ' ') };
        if (!started && request.progress.stage === 'awaiting_signers') {
          process.stderr.write(
            `waiting (at most ${duration(timeoutSeconds)}, --timeout) for ${waitingFor(request)} to act on ${id}: their links are in their e-mail (in ${serviceUrl()}/dev/mail while Signet has no mail transport)\n`,
          );
        }
        if (!started) bar.start(acting(request).length, done(request), payload);
        else bar.update(done(request), payload);
        started = true;
      },
    });
  } catch (error) {
    if (!(error instanceof SignetError && error.code === 'timeout')) throw error;
    throw new Error(`gave up waiting after ${duration(timeoutSeconds)}: ${id} is still pending (\`npx signet status ${id} --wait\` waits again)`);
  } finally {
    if (started) bar.stop();
  }
}

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

/** The outcome as the exit code: 0 when completed (or still pending without --wait), 2 otherwise. */
function finish(request: SigningRequest) {
  print(summary(request));
  if (request.status !== 'completed' && request.status !== 'pending') process.exitCode = 2;
}

export function clientCommands(program: Command) {
  program
    .command('send <file>')
    .description('send a PDF for signature (SIGNET_API_KEY, SIGNET_URL): signet send contract.pdf --to "Ada <ada@example.com>" --title NDA')
    .requiredOption('--to <recipient>', 'a signer, "Name <email>"; repeat for several (they sign in any order)', parseRecipient)
    .requiredOption('--title <title>', 'the title signers see')
    .option('--message <message>', 'a message to the signers')
    .option('--sequential', 'the signers sign one after another, in the order given')
    .option('--wait', 'wait until every signer has acted and the sealed PDF is ready, with a progress bar')
    .option('--timeout <seconds>', 'with --wait: give up after this long (exit 1)', parseSeconds, 3600)
    .action(
      async (
        file: string,
        options: { to: { name: string; email: string }[]; title: string; message?: string; sequential?: boolean; wait?: boolean; timeout: number },
      ) => {
        const client = signet();
        const document = await client.documents.upload(fs.readFileSync(file), path.basename(file));
        const created = await client.signingRequests.create({
          document_id: document.id,
          title: options.title,
          ...(options.message ? { message: options.message } : {}),
          ...(options.sequential ? { signingOrder: 'sequential' as const } : {}),
          signers: options.to,
        });
        process.stderr.write(`sent ${created.id} to ${options.to.map((signer) => signer.email).join(', ')}\n`);
        finish(options.wait ? await waitWithProgress(client, created.id, options.timeout) : created);
      },
    );

  program
    .command('status <signingRequestId>')
    .description('where a signing request stands: each signer’s status (SIGNET_API_KEY, SIGNET_URL)')
    .option('--wait', 'wait for its outcome, with a progress bar')
    .option('--timeout <seconds>', 'with --wait: give up after this long (exit 1)', parseSeconds, 3600)
    .action(async (id: string, options: { wait?: boolean; timeout: number }) => {
      const client = signet();
      finish(options.wait ? await waitWithProgress(client, id, options.timeout) : await client.signingRequests.get(id));
    });

  program
    .command('download <signingRequestId>')
    .description('download the sealed PDF of a completed request (a ZIP when it has several documents)')
    .option('-o, --output <file>', 'where to write it; - for stdout (default <id>.pdf or <id>.zip)')
    .action(async (id: string, options: { output?: string }) => {
      const bytes = await signet().signingRequests.download(id);
      const zip = bytes[0] === 0x50 && bytes[1] === 0x4b;
      if (options.output === '-') {
        process.stdout.write(bytes);
        return;
      }
      const output = options.output ?? `${id}.${zip ? 'zip' : 'pdf'}`;
      fs.writeFileSync(output, bytes);
      process.stderr.write(`wrote ${output} (${bytes.length} bytes)\n`);
    });
}
