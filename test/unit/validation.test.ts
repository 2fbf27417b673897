import { expect } from 'chai';
import { AppError } from '../../src/errors';
import { parseInput } from '../../src/api/validation';
import { DocumentCreateSchema } from '../../src/documents/schema';
import { isId, newId } from '../../src/ids';
import { loadConfig } from '../../src/config';

const detailsOf = (input: unknown) => {
  try {
    parseInput(DocumentCreateSchema, input);
  } catch (error) {
    expect(error).to.be.instanceOf(AppError);
    return (error as AppError).details;
  }
  throw new Error('expected a validation error');
};

describe('validation messages (spec §7)', () => {
  it('reports every violated rule, each naming its field', () => {
    expect(detailsOf({})).to.deep.equal(['fileName is required', 'fileSize must be a positive number']);
    expect(detailsOf({ fileName: 'a.pdf', fileSize: -1 })).to.deep.equal(['fileSize must be a positive number']);
    expect(detailsOf({ fileName: 'a.pdf', fileSize: 'ten' })).to.deep.equal(['fileSize must be a positive number']);
    expect(detailsOf({ fileName: 'x'.repeat(256), fileSize: 1 })).to.deep.equal(['fileName must be at most 255 characters']);
    expect(detailsOf('just a string')).to.deep.equal(['body must be an object']);
  });
});

describe('ids', () => {
  it('are prefixed, time-sortable TypeIDs', async () => {
    const first = newId('document');
    await new Promise((resolve) => setTimeout(resolve, 2));
    const second = newId('document');
    expect(first).to.match(/^doc_[0-9a-z]{26}$/);
    expect(isId('document', first)).to.equal(true);
    expect(isId('account', first)).to.equal(false);
    expect(second > first).to.equal(true);
  });
});

describe('configuration', () => {
  it('has the embedded defaults and refuses nonsense with a clear message', () => {
    const config = loadConfig({});
    expect(config).to.include({ PORT: 3000, MAX_UPLOAD_BYTES: 25 * 1024 * 1024, runApi: true, runWorker: true });
    expect(config.dataDir).to.match(/\/data$/);
    expect(() => loadConfig({ PORT: 'eighty' })).to.throw(/PORT/);
  });
});
