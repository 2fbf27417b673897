import { expect } from 'chai';
import { afterCommit, unitOfWork } from '../../src/db/unitOfWork';
import { openScratchDatabase } from '../support/scratchDatabase';

describe('unitOfWork: after-commit hooks of a transaction', () => {
  let database: Awaited<ReturnType<typeof openScratchDatabase>>;
  before(async () => {
    database = await openScratchDatabase('unit-of-work');
  });
  after(() => database.close());

  it('runs its hooks once the transaction has committed, and not before', async () => {
    const ran: string[] = [];
    const result = await unitOfWork(database.knex, async (trx) => {
      afterCommit(trx, () => ran.push('hook'));
      await trx.raw('select 1');
      expect(ran).to.deep.equal([]);
      return 'done';
    });
    expect(result).to.equal('done');
    expect(ran).to.deep.equal(['hook']);
  });

  it('drops its hooks when the transaction rolls back', async () => {
    const ran: string[] = [];
    const failed = await unitOfWork(database.knex, async (trx) => {
      afterCommit(trx, () => ran.push('hook'));
      throw new Error('rolled back');
    }).catch((error: Error) => error.message);
    expect(failed).to.equal('rolled back');
    expect(ran).to.deep.equal([]);
  });

  it('runs the hooks of a savepoint when the transaction around it commits, and drops them when the savepoint fails', async () => {
    const ran: string[] = [];
    await unitOfWork(database.knex, async (trx) => {
      await unitOfWork(trx, async (inner) => void afterCommit(inner, () => ran.push('kept')));
      expect(ran).to.deep.equal([]);
      await unitOfWork(trx, async (inner) => {
        afterCommit(inner, () => ran.push('dropped'));
        throw new Error('savepoint fails');
      }).catch(() => undefined);
    });
    expect(ran).to.deep.equal(['kept']);
  });

  it('runs a hook at once outside a transaction, and refuses a transaction it did not open', async () => {
    const ran: string[] = [];
    afterCommit(database.knex, () => ran.push('now'));
    expect(ran).to.deep.equal(['now']);
    const failed = await database.knex.transaction(async (trx) => afterCommit(trx, () => ran.push('never'))).catch((error: Error) => error.message);
    expect(failed).to.match(/unitOfWork/);
    expect(ran).to.deep.equal(['now']);
  });
});
