import { expect } from 'chai';
import { rowsOfCsv } from '../../src/bulkSends/rows';

// A bulk send's CSV read into the JSON rows it stands for (src/bulkSends/rows.ts).
describe('rowsOfCsv', () => {
  it('reads a BOM, semicolons, quoted fields with separators and line breaks, CRLF, and leaves empty cells out', () => {
    const csv =
      '\ufefftenant.name;tenant.email;prefill.Notes;externalId;title\r\n"Lovelace; Ada";ada@example.com;"two\r\nlines";a-1;\r\nGrace;grace@example.com;;a-2;Renewal\r\n';
    expect(rowsOfCsv(csv)).to.deep.equal({
      rows: [
        { recipients: { tenant: { name: 'Lovelace; Ada', email: 'ada@example.com' } }, prefill: { Notes: 'two\r\nlines' }, externalId: 'a-1' },
        { recipients: { tenant: { name: 'Grace', email: 'grace@example.com' } }, externalId: 'a-2', title: 'Renewal' },
      ],
      problems: [],
    });
  });

  it('reads commas, a role whose name has a dot, and expiresInDays as a number', () => {
    const { rows } = rowsOfCsv('co.signer.name,co.signer.email,expiresInDays\nAda,ada@example.com,14\n');
    expect(rows).to.deep.equal([{ recipients: { 'co.signer': { name: 'Ada', email: 'ada@example.com' } }, expiresInDays: 14 }]);
  });

  it('names a column it does not know, a row of the wrong length and an empty file', () => {
    expect(rowsOfCsv('tenant.name,colour\nAda,blue\n').problems).to.deep.equal([
      'file column 2 ("colour") must be <role>.name, <role>.email, prefill.<label>, title, message, expiresInDays, externalId',
    ]);
    expect(rowsOfCsv('tenant.name,tenant.email\nAda\n').problems[0]).to.match(/^file is not a CSV that can be read: /);
    expect(rowsOfCsv('').problems).to.deep.equal(['file must have a header line and at least one row']);
  });
});
