import { expect } from 'chai';
import { DEFAULT_ALGORITHM_SUNSETS, loadConfig } from '../../src/config';
import { isArchiveDue, weakenedAlgorithms } from '../../src/pdf/archiveDue';
import { archivePolicyOf } from '../../src/signingRequests/sealing';

// When an archive is due for its algorithms (src/pdf/archiveDue.ts): SEAL_ALGORITHM_SUNSETS, read once
// at start-up, and the margin before each day.
describe('SEAL_ALGORITHM_SUNSETS and the renewal margin', () => {
  it("defaults to NIST SP 800-131A's days: SHA-1 and RSA 1024 gone, RSA 2048 trusted until 2031", () => {
    const policy = archivePolicyOf(loadConfig({}));
    expect(policy).to.deep.equal({
      renewalMarginDays: 90,
      algorithmSunsets: { sha1: '2014-01-01', 'rsa-1024': '2014-01-01', 'rsa-2048': '2031-01-01', 'ec-secp224r1': '2031-01-01' },
    });
    expect(loadConfig({}).SEAL_ALGORITHM_SUNSETS).to.equal(DEFAULT_ALGORITHM_SUNSETS);
  });

  it('counts an algorithm weakened from its day less the margin on, not before', () => {
    const policy = archivePolicyOf({ SEAL_ARCHIVE_RENEWAL_DAYS: 90, SEAL_ALGORITHM_SUNSETS: 'sha1=2014-01-01, rsa-2048=2031-01-01' });
    expect(weakenedAlgorithms(policy, new Date('2030-10-02T23:59:59Z'))).to.deep.equal(['sha1']);
    expect(weakenedAlgorithms(policy, new Date('2030-10-03T00:00:00Z'))).to.deep.equal(['sha1', 'rsa-2048']);
    expect(weakenedAlgorithms(archivePolicyOf({ SEAL_ARCHIVE_RENEWAL_DAYS: 1, SEAL_ALGORITHM_SUNSETS: '' }))).to.deep.equal([]);
  });

  it('a file is due when its day has come, or when what it rests on weakens within the margin, whatever its day', () => {
    const policy = archivePolicyOf({ SEAL_ARCHIVE_RENEWAL_DAYS: 90, SEAL_ALGORITHM_SUNSETS: 'rsa-2048=2031-01-01' });
    const now = new Date('2030-10-03T00:00:00Z');
    expect(isArchiveDue({ renewAfter: '2039-10-03T00:00:00.000Z', algorithms: ['sha256', 'rsa-2048'] }, policy, now)).to.equal(true);
    expect(isArchiveDue({ renewAfter: '2039-10-03T00:00:00.000Z', algorithms: ['sha256', 'rsa-3072'] }, policy, now)).to.equal(false);
    expect(isArchiveDue({ renewAfter: '2030-10-03T00:00:00.000Z', algorithms: ['sha256', 'rsa-3072'] }, policy, now)).to.equal(true);
  });

  it('refuses at start-up a list it cannot read, saying what it wants', () => {
    for (const value of ['sha1', 'sha1=2014', 'rsa-2048=2031-01-01;sha1=2014-01-01', 'rsa-2048=2031-13-45']) {
      expect(() => loadConfig({ SEAL_ALGORITHM_SUNSETS: value }), value).to.throw(/SEAL_ALGORITHM_SUNSETS/);
    }
    expect(loadConfig({ SEAL_ALGORITHM_SUNSETS: '' }).SEAL_ALGORITHM_SUNSETS).to.equal('');
  });
});
