import { expect } from 'chai';
import { createMailTransport } from '../../src/mail';
import { createNotifier, sendInvitations } from '../../src/signingRequests/notifications';
import { createSigningRequest, eventually } from '../support/signing';
import { createTestAccount } from '../support/system';

// A recipient who has done their part before their invitation went out (an approver given a link by
// the sender, who approved at once) is not invited afterwards: no e-mail, no `invitation_sent` step.
describe('invitations of recipients who have already acted', () => {
  it('an approver who approved before the invitation ran gets none; a signer of the step still does', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, {
      signers: [
        { name: 'Ada Lovelace', email: 'ada@example.com', routingOrder: 1 },
        { name: 'Ann Approver', email: 'ann@example.com', recipientType: 'approver', routingOrder: 2 },
        { name: 'Sam Signer', email: 'sam@example.com', routingOrder: 2 },
      ],
    });
    const [, approver, signer] = signingRequest.signers as { id: string }[];
    // Step 2's invitations wait for Ada; the approver's part is done in the meantime.
    await eventually(async () => expect((await account.db('signers').where({ id: signingRequest.signers[0].id }).first()).status).to.equal('notified'));
    await account.db('signers').where({ id: approver.id }).update({ status: 'approved', signed_at: account.db.fn.now() });

    const { system } = account;
    const notifier = createNotifier({
      db: system.database.knex,
      events: system.events,
      config: system.config,
      mail: createMailTransport(system.config, system.database.knex),
    });
    await sendInvitations(notifier, signingRequest.id, [approver.id, signer.id]);

    const steps = await account.db('audit_trail').where({ signing_request_id: signingRequest.id, action: 'invitation_sent' }).select('signer_id');
    expect(steps.map((step) => step.signer_id)).to.have.members([signingRequest.signers[0].id, signer.id]);
    // Keyed by the approver's id: other tests' requests e-mail ann@example.com too.
    const mails = await account.db('mail_outbox').where('idempotency_key', 'like', `%${approver.id}%`).count({ count: '*' });
    expect(Number(mails[0].count)).to.equal(0);
    expect((await account.db('signers').where({ id: approver.id }).first()).status).to.equal('approved');
    expect((await account.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: { reason: 'done testing' } })).status).to.equal(200);
  });
});
