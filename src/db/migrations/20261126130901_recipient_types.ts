import type { Knex } from 'knex';

// Recipients of more than one kind, in steps: a signer, an approver, a viewer or a cc, and the step
// (routing order) each acts in; recipients of one step act in parallel. Signers of requests made
// before are signers, in the steps their request's signing order gave them.
export async function up(knex: Knex) {
  await knex.schema.alterTable('signers', (table) => {
    table.text('recipient_type').notNullable().defaultTo('signer').comment('signer | approver | viewer | cc');
    table.integer('routing_order').notNullable().defaultTo(1).comment('the step: recipients with the same number act in parallel, steps in increasing order');
    table.timestamp('approved_at', { useTz: true, precision: 3 });
  });
  await knex.raw(`update signers s set routing_order = s."order" from signing_requests r where r.id = s.signing_request_id and r.signing_order = 'sequential'`);
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('signers', (table) => {
    table.dropColumn('approved_at');
    table.dropColumn('routing_order');
    table.dropColumn('recipient_type');
  });
}
