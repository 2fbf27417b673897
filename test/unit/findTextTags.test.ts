import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Config } from '../../src/config';
import { tagTextProblems } from '../../src/documents/fields';
import { createTextTagFinder, type TextTagFinder } from '../../src/pdf/textTags';

// The text-tag reader (src/pdf/findTextTags.mjs, in the PDF pool): what each tag becomes, or the warning that
// says how to write it. Options and formulas are a tag's fourth part; their rules are checked where fields are placed.

/** A one-page PDF with each line of text printed by pdf-lib in Helvetica, top to bottom. */
async function pdfOf(lines: string[]) {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([595, 842]);
  lines.forEach((line, index) => page.drawText(line, { x: 40, y: 800 - index * 20, size: 10, font }));
  return pdf.save();
}

describe('reading text tags (src/pdf/findTextTags.mjs, in the PDF pool)', function () {
  this.timeout(60_000);
  let finder: TextTagFinder;

  before(() => {
    finder = createTextTagFinder({ PDF_POOL_SIZE: 1, PDF_TIMEOUT_MS: 20_000, PDF_MAX_MEMORY_MB: 256 } as Config);
  });
  after(() => finder.close());

  const read = async (lines: string[]) => {
    const { fields, warnings } = await finder.findTags(await pdfOf(lines));
    return { fields: fields.map(({ role, type, label, options, formula }) => ({ role, type, label, options, formula })), warnings };
  };

  it('reads the options of radio, dropdown, multiSelect and checkboxGroup, each trimmed, in any case of type', async () => {
    const { fields, warnings } = await read([
      'Plan: {{radio:tenant:Plan:Basic|Pro}}',
      'Country: {{DROPDOWN:tenant:Country: United Kingdom | France }}',
      'Extras: {{multiSelect:2:Extras:Parking|Storage|Gym}}',
      'Rooms: {{checkboxgroup:tenant:Rooms:Kitchen}}',
      'Time: {{radio:tenant:Time:9:00|10:30 [late]}}',
    ]);
    expect(warnings).to.deep.equal([]);
    expect(fields).to.deep.equal([
      { role: 'tenant', type: 'radio', label: 'Plan', options: ['Basic', 'Pro'], formula: undefined },
      { role: 'tenant', type: 'dropdown', label: 'Country', options: ['United Kingdom', 'France'], formula: undefined },
      { role: '2', type: 'multiSelect', label: 'Extras', options: ['Parking', 'Storage', 'Gym'], formula: undefined },
      { role: 'tenant', type: 'checkboxGroup', label: 'Rooms', options: ['Kitchen'], formula: undefined },
      { role: 'tenant', type: 'radio', label: 'Time', options: ['9:00', '10:30 [late]'], formula: undefined },
    ]);
  });

  it('reads a calculated field’s formula, its [Label]s written {Label}, unchecked', async () => {
    const { fields, warnings } = await read([
      'Total: {{calculated:tenant:Total:[Rent] * [Months]}}',
      'Net: {{calculated:tenant:Net: round([Monthly rent] * 12 - [Deposit], 2) }}',
      'Odd: {{calculated:tenant:Odd:[Rent] ** ]}}',
    ]);
    expect(warnings).to.deep.equal([]);
    expect(fields.map(({ type, label, formula, options }) => ({ type, label, formula, options }))).to.deep.equal([
      { type: 'calculated', label: 'Total', formula: '{Rent} * {Months}', options: undefined },
      { type: 'calculated', label: 'Net', formula: 'round({Monthly rent} * 12 - {Deposit}, 2)', options: undefined },
      { type: 'calculated', label: 'Odd', formula: '{Rent} ** ]', options: undefined },
    ]);
  });

  it('reads the other types as before, without options or formula', async () => {
    const { fields } = await read(['{{signature:tenant}} {{text:tenant:Company}} {{number:1:Rent}}', '{{image:tenant:Stamp}} {{attachment:tenant:Passport}}']);
    expect(fields).to.deep.equal([
      { role: 'tenant', type: 'signature', label: null, options: undefined, formula: undefined },
      { role: 'tenant', type: 'text', label: 'Company', options: undefined, formula: undefined },
      { role: '1', type: 'number', label: 'Rent', options: undefined, formula: undefined },
      { role: 'tenant', type: 'image', label: 'Stamp', options: undefined, formula: undefined },
      { role: 'tenant', type: 'attachment', label: 'Passport', options: undefined, formula: undefined },
    ]);
  });

  it('warns, leaving the tag out, about options or a formula missing, an empty option, and a fourth part where none applies', async () => {
    const { fields, warnings } = await read([
      '{{radio:tenant:Plan}} {{dropdown:tenant}} {{multiSelect:tenant:Extras:}}',
      '{{radio:tenant:Plan:Basic||Pro}} {{checkboxGroup:tenant:Rooms:Kitchen|}}',
      '{{calculated:tenant:Total}} {{calculated:tenant:Total: }}',
      '{{text:tenant:Company:Acme}} {{signature:tenant::x}} {{staticText:tenant:Note:Hello}}',
    ]);
    expect(fields).to.deep.equal([]);
    const optionsOf = (type: string) => `write {{${type}:role:label:option 1|option 2}}`;
    const fourth = 'has a fourth part, which only radio, dropdown, multiSelect, checkboxGroup (its options) and calculated (its formula) take';
    expect(warnings).to.deep.equal([
      `page 1: {{radio:tenant:Plan}} needs its options: ${optionsOf('radio')}`,
      `page 1: {{dropdown:tenant}} needs its options: ${optionsOf('dropdown')}`,
      `page 1: {{multiSelect:tenant:Extras:}} needs its options: ${optionsOf('multiSelect')}`,
      `page 1: {{radio:tenant:Plan:Basic||Pro}} has an empty option: ${optionsOf('radio')}, with an option on each side of every |`,
      `page 1: {{checkboxGroup:tenant:Rooms:Kitchen|}} has an empty option: ${optionsOf('checkboxGroup')}, with an option on each side of every |`,
      'page 1: {{calculated:tenant:Total}} needs its formula: write {{calculated:role:label:[Field 1] + [Field 2]}}, each field named by its label in square brackets',
      'page 1: {{calculated:tenant:Total: }} needs its formula: write {{calculated:role:label:[Field 1] + [Field 2]}}, each field named by its label in square brackets',
      `page 1: {{text:tenant:Company:Acme}} ${fourth}: write {{text:role}} or {{text:role:label}}`,
      'page 1: {{signature:tenant::x}} is malformed: write {{type:role}} or {{type:role:label}}',
      'page 1: {{staticText:tenant:Note:Hello}} has an unknown type "staticText" (known: signature, initials, date, text, checkbox, number, email, phone, radio, dropdown, multiSelect, checkboxGroup, calculated, signerName, signerEmail, image, attachment)',
    ]);
  });

  it('keeps braces out of every part: a brace inside a tag makes it malformed', async () => {
    const { fields, warnings } = await read(['{{calculated:tenant:Total:{Rent} * 2}}']);
    expect(fields).to.deep.equal([]);
    expect(warnings).to.deep.equal(['page 1: {{calculated:tenant:Total:{Rent} * 2}} is malformed: write {{type:role}} or {{type:role:label}}']);
  });

  it('names the options of a tag that a sealed PDF cannot show, as the options’ schema would (tagTextProblems)', () => {
    // A glyph without a Unicode mapping can come out of pdf.js as a private-use code point.
    expect(tagTextProblems({ label: 'Plan', options: ['Basic', 'Pro \uE000'] }, 'the field of tag {{radio:1:Plan:Basic|Pro}} on page 1')).to.deep.equal([
      'the field of tag {{radio:1:Plan:Basic|Pro}} on page 1.options.1 contains characters that cannot be shown in the signed PDF: U+E000',
    ]);
    expect(tagTextProblems({ label: null }, 'x')).to.deep.equal([]);
  });
});
