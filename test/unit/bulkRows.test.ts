import { expect } from 'chai';
import { checkRow, rowsOfCsv } from '../../src/bulkSends/rows';
import type { Template } from '../../src/templates/store';

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
    const unknown = rowsOfCsv('tenant.name,colour,prefill.\nAda,blue,x\n');
    expect(unknown.problems).to.deep.equal([
      'file column 2 ("colour") must be <role>.name, <role>.email, prefill.<label>, title, message, expiresInDays, externalId',
      'file column 3 ("prefill.") must be <role>.name, <role>.email, prefill.<label>, title, message, expiresInDays, externalId',
    ]);
    expect(unknown.rows, 'a column it does not know is not read').to.deep.equal([{ recipients: { tenant: { name: 'Ada' } } }]);
    expect(rowsOfCsv('tenant.name,tenant.email\nAda\n').problems[0]).to.match(/^file is not a CSV that can be read: /);
    expect(rowsOfCsv('').problems).to.deep.equal(['file must have a header line and at least one row']);
  });

  it('keeps a CSV row as JSON takes it: a checkbox’s "true" a boolean, a list’s options split, so that sending reads it as JSON', () => {
    const place = { page: 1, x: 50, y: 100, width: 100, height: 20, document: 1 };
    const template = {
      id: 'tpl_01jd8x3c6hf1z8k3q2v5n7m9pt',
      name: 'Lease',
      roles: [{ name: 'tenant', order: 1, recipientType: 'signer', routingOrder: null, verification: null }],
      fields: [
        { ...place, role: 'tenant', type: 'signature', label: null, required: true },
        { ...place, role: 'tenant', type: 'checkbox', label: 'Pets', required: false },
        { ...place, role: 'tenant', type: 'multiSelect', label: 'Extras', options: ['Parking', 'Gym'], required: false },
      ],
    } as unknown as Template;
    const [given] = rowsOfCsv('tenant.name,tenant.email,prefill.Pets,prefill.Extras\nAda,ada@example.com,true,Parking | Gym\n').rows;
    const fromCsv = checkRow(template, given, 0, 'csv');
    if (fromCsv.problems) expect.fail(fromCsv.problems.join('\n'));
    expect(fromCsv.row.prefill).to.deep.equal({ Pets: true, Extras: ['Parking', 'Gym'] });
    // What is kept is checked again, as JSON, when its batch sends it.
    expect(checkRow(template, fromCsv.row, 0, 'json').problems).to.equal(undefined);
    expect(checkRow(template, given, 0, 'json').problems).to.deep.equal([
      'rows.0.prefill.Pets must be true or false: it is a checkbox',
      "rows.0.prefill.Extras must be a list of options: its field's type is multiSelect",
    ]);
  });
});
