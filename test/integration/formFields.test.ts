import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import fc from 'fast-check';
import { client } from '../support/http';
import { createSigningRequest, eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';
import { templateField, uploadLease } from '../support/templates';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const signature = { type: 'typed', value: 'Grace Hopper' };
const grace = { name: 'Grace Hopper', email: 'grace@example.com' };

const place = (y: number, extra: Record<string, unknown> & { type?: string; label?: string }) => ({ page: 1, x: 50, y, width: 300, height: 20, ...extra });

// One of each type, wired: a total computed from rent and months, a reason shown only for the Pro plan.
const everyType = [
  place(780, { type: 'signature', height: 40 }),
  place(740, { type: 'text', label: 'Company', maxLength: 80 }),
  place(710, { type: 'number', label: 'Rent', min: 0, max: 10000, decimals: 2 }),
  place(680, { type: 'number', label: 'Months', min: 1, max: 36, step: 1 }),
  place(650, { type: 'calculated', label: 'Total', formula: 'round({Rent} * {Months}, 2)' }),
  place(620, { type: 'email', label: 'Billing e-mail' }),
  place(590, { type: 'phone', label: 'Phone', required: false }),
  place(560, {
    type: 'radio',
    label: 'Plan',
    options: ['Basic', 'Pro'],
    optionBoxes: [
      { x: 400, y: 560, width: 12, height: 12 },
      { x: 450, y: 560, width: 12, height: 12 },
    ],
  }),
  place(530, { type: 'dropdown', label: 'Country', options: ['United Kingdom', 'France'] }),
  place(500, { type: 'multiSelect', label: 'Extras', options: ['Parking', 'Storage', 'Gym'], maxSelected: 2, required: false }),
  place(470, { type: 'checkboxGroup', label: 'Rooms', options: ['Kitchen', 'Garden'], minSelected: 1 }),
  place(440, { type: 'text', label: 'Why Pro', showWhen: { field: 'Plan', is: 'equals', values: ['Pro'] } }),
  place(410, { type: 'signerName', label: 'Name' }),
  place(380, { type: 'signerEmail', label: 'E-mail' }),
  place(350, { type: 'staticText', text: 'Rent is due on the first of the month' }),
  place(320, { type: 'checkbox', label: 'Terms', width: 20 }),
];

const answers = {
  '1': 'Navy Computing Lab',
  '2': 1200.5,
  '3': '12',
  '5': 'billing@navy.example',
  '7': 'Basic',
  '8': 'France',
  '9': ['Parking', 'Gym'],
  '10': ['Garden'],
  '15': true,
};

function signerOf(account: Account, url: string) {
  const request = client(account.system.url!);
  const token = tokenOf(url);
  return {
    view: () => request('GET', `/sign/${token}/request`),
    sign: (fieldValues: unknown) => request('POST', `/sign/${token}/sign`, { json: { consent: true, signature, fieldValues } }),
  };
}

async function requestWith(account: Account, fields: unknown[]) {
  const { signingRequest } = await createSigningRequest(account.request, { signers: [{ ...grace, fields }] });
  return { signingRequest, signer: signerOf(account, await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id)) };
}

/** A PDF as independent tools read it: poppler's words and signature report; qpdf --check throws on a broken file. */
function readBack(pdf: Uint8Array) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-form-'));
  try {
    const file = path.join(dir, 'file.pdf');
    fs.writeFileSync(file, pdf);
    execFileSync('qpdf', ['--check', file]);
    return { words: execFileSync('pdftotext', [file, '-']).toString(), signatures: execFileSync('pdfsig', [file]).toString() };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const createWith = (account: Account, fields: unknown[]) =>
  account.request('POST', '/api/v1/signatures', { json: { document_id: 'doc_x', title: 'T', signers: [{ ...grace, fields }] } });

describe('form fields on a signing request', function () {
  this.timeout(120_000);

  it('takes every type; checks, computes and hides on signing; shows the values typed and seals them', async () => {
    const account = await createTestAccount();
    const { signingRequest, signer } = await requestWith(account, everyType);
    const shown = (await signer.view()).body.signer.fields;
    expect(shown.map((field: { type: string }) => field.type)).to.deep.equal(everyType.map((field) => field.type));
    expect(shown[4].formula).to.equal('round({Rent} * {Months}, 2)');
    expect(shown[11].showWhen).to.deep.equal({ field: 'Plan', is: 'equals', values: ['Pro'] });

    // A value for the calculated field is the server's to compute, not the signer's.
    const computed = await signer.sign({ ...answers, '4': 1 });
    expect(computed.status).to.equal(400);
    expect(computed.body.details).to.deep.equal(['fieldValues.4 must not be given: it is calculated (the calculated field "Total" on page 1)']);

    // "Why Pro" is hidden for Basic: not required, and a value sent for it is dropped.
    const signed = await signer.sign({ ...answers, '11': 'not sealed' });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    await eventually(async () => expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);

    const fields = (await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.signers[0].fields;
    const filled = fields.map((field: { filled?: unknown }) => field.filled);
    expect(filled).to.deep.equal([
      undefined,
      { value: 'Navy Computing Lab', hidden: false },
      { value: 1200.5, hidden: false },
      { value: 12, hidden: false },
      { value: 14406, hidden: false },
      { value: 'billing@navy.example', hidden: false },
      { value: null, hidden: false },
      { value: 'Basic', hidden: false },
      { value: 'France', hidden: false },
      { value: ['Parking', 'Gym'], hidden: false },
      { value: ['Garden'], hidden: false },
      { value: null, hidden: true },
      { value: 'Grace Hopper', hidden: false },
      { value: 'grace@example.com', hidden: false },
      undefined,
      { value: true, hidden: false },
    ]);

    // The webhooks carry the same answers, by position, type and label.
    const answersOf = filled.flatMap((value: unknown, position: number) =>
      value ? [{ position, type: everyType[position].type, label: everyType[position].label, ...(value as object) }] : [],
    );
    const events = await account.db('events').where({ account_id: account.account.id }).whereIn('type', ['signer.signed', 'signing_request.completed']);
    expect(events.find((row) => row.type === 'signer.signed').data.fields).to.deep.equal(answersOf);
    expect(events.find((row) => row.type === 'signing_request.completed').data.signers[0].fields).to.deep.equal(answersOf);

    const { words: text, signatures } = readBack((await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`)).bytes);
    expect(signatures).to.contain('Signature is Valid');
    for (const expected of [
      'Navy Computing Lab',
      '1200.5',
      '14406',
      'billing@navy.example',
      'France',
      'Parking',
      'Gym',
      'Garden',
      'grace@example.com',
      'Rent is due',
    ])
      expect(text, expected).to.include(expected);
    expect(text).not.to.include('not sealed');
    expect(text).not.to.include('Pro');
  });

  it('refuses a value against its field’s rule, naming the field, and lists every problem at once', async () => {
    const account = await createTestAccount();
    const { signer } = await requestWith(account, everyType);
    const response = await signer.sign({
      ...answers,
      '1': 'x'.repeat(81),
      '2': 10000.001,
      '3': 2.5,
      '5': 'not-an-address',
      '7': 'Gold',
      '8': ['France'],
      '9': ['Parking', 'Storage', 'Gym'],
      '10': [],
      '15': 'yes',
    });
    expect(response.status).to.equal(400);
    expect(response.body.error).to.equal('validation_error');
    const details: string[] = response.body.details;
    expect(details.map((detail) => detail.split(' ')[0])).to.deep.equal(
      ['1', '2', '3', '5', '7', '8', '9', '10', '15'].map((position) => `fieldValues.${position}`),
      details.join('\n'),
    );
    expect(details[0]).to.match(/at most 80 characters.*"Company"/);
    expect(details[3]).to.match(/e-mail.*"Billing e-mail"/);
    expect(details[4]).to.match(/Basic.*Pro/);
    expect(details[8]).to.equal('fieldValues.15 must be true or false: it is a checkbox (the checkbox field "Terms" on page 1)');
  });

  it('requires a field its condition shows, and not one it hides', async () => {
    const account = await createTestAccount();
    const { signer } = await requestWith(account, everyType);
    const response = await signer.sign({ ...answers, '7': 'Pro' });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal(['fieldValues.11 is required (the text field "Why Pro" on page 1)']);
    expect((await signer.sign({ ...answers, '7': 'Pro', '11': 'Priority support' })).status).to.equal(200);
  });

  it('400 naming signers.i.fields.j for each rule, option, formula and text that cannot work', async () => {
    const account = await createTestAccount();
    const number = { ...place(700, {}), type: 'number', label: 'N' };
    const cases: [unknown[], RegExp][] = [
      [[{ ...number, min: 10, max: 1 }], /^signers\.0\.fields\.0\.max must be at least min \(10\)$/],
      [[{ ...number, minLength: 3 }], /^signers\.0\.fields\.0\.minLength does not apply to a number field$/],
      [[{ ...place(700, { type: 'text', label: 'T', pattern: '(' }) }], /^signers\.0\.fields\.0\.pattern/],
      [[{ ...place(700, { type: 'radio', label: 'R' }) }], /^signers\.0\.fields\.0\.options are required for a radio field$/],
      [[{ ...place(700, { type: 'dropdown', label: 'D', options: ['a', 'a'] }) }], /^signers\.0\.fields\.0\.options\.1 \("a"\) is listed twice$/],
      [[{ ...place(700, { type: 'text', label: 'T', options: ['a'] }) }], /^signers\.0\.fields\.0\.options do not apply to a text field$/],
      [
        [{ ...place(700, { type: 'radio', label: 'R', options: ['a', 'b'], optionBoxes: [{ x: 1, y: 1, width: 9, height: 9 }] }) }],
        /^signers\.0\.fields\.0\.optionBoxes/,
      ],
      [[{ ...place(700, { type: 'calculated', label: 'C' }) }], /^signers\.0\.fields\.0\.formula is required: it is calculated$/],
      [
        [number, { ...place(650, { type: 'calculated', label: 'C', formula: '{N} *' }) }],
        /^signers\.0\.fields\.1\.formula does not parse: expected a number, a field or \( at 5$/,
      ],
      [[{ ...place(700, { type: 'staticText' }) }], /^signers\.0\.fields\.0\.text/],
      [[{ ...place(700, { type: 'signature', min: 1 }) }], /^signers\.0\.fields\.0\.min does not apply to a signature field$/],
      [
        [{ ...place(700, { type: 'checkboxGroup', label: 'G', options: ['a', 'b'], minSelected: 3 }) }],
        /^signers\.0\.fields\.0\.minSelected must be at most the number of options \(2\)$/,
      ],
    ];
    for (const [fields, detail] of cases) {
      const response = await createWith(account, fields);
      expect(response.status, JSON.stringify(fields)).to.equal(400);
      expect(response.body.error).to.equal('validation_error');
      expect(
        response.body.details.some((line: string) => detail.test(line)),
        `${detail}: ${response.body.details.join('\n')}`,
      ).to.equal(true);
    }
  });

  it('400 for conditions and formulas that name no field, name their own, or go round in a circle: on requests and templates alike', async () => {
    const account = await createTestAccount();
    const text = (label: string, showWhen: unknown) => place(700, { type: 'text', label, showWhen });
    const cases: [unknown[], RegExp][] = [
      [[text('A', { field: 'Z', is: 'filled' })], /"Z", which is no field/],
      [[text('A', { field: 'A', is: 'filled' })], /itself/],
      [[text('A', { field: 'B', is: 'filled' }), text('B', { field: 'A', is: 'empty' })], /"A" → "B" → "A"|"B" → "A" → "B"/],
      [[place(700, { type: 'calculated', label: 'C', formula: '{C} + 1' })], /itself/],
      [[text('A', { field: 'B', is: 'filled' }), text('A', undefined)], /label|unique/],
    ];
    const document = await uploadLease(account.request);
    for (const [fields, detail] of cases) {
      const request = await createWith(account, fields);
      expect(request.status, JSON.stringify(fields)).to.equal(400);
      expect(request.body.details.join('\n'))
        .to.match(detail)
        .and.match(/signers\.0\.fields/);
      const template = await account.request('POST', '/api/v1/templates', {
        json: {
          name: 'Lease',
          documentId: document,
          roles: [{ name: 'tenant' }],
          fields: (fields as Record<string, unknown>[]).map(({ page: _p, x: _x, y, width: _w, height: _h, ...logic }) => ({
            ...templateField('tenant', logic.type as string, { y }),
            ...logic,
          })),
        },
      });
      expect(template.status, JSON.stringify(template.body)).to.equal(400);
      expect(template.body.details.join('\n'))
        .to.match(detail)
        .and.match(/role "tenant"|fields\.\d/);
    }
  });

  it('prefills a template’s number and option fields by their rules, and computes from the prefill', async () => {
    const account = await createTestAccount();
    const fields = [
      templateField('tenant', 'signature', { y: 700 }),
      templateField('tenant', 'number', { label: 'Rent', min: 0, y: 650 }),
      templateField('tenant', 'radio', { label: 'Plan', options: ['Basic', 'Pro'], y: 600 }),
      templateField('tenant', 'calculated', { label: 'Year', formula: '{Rent} * 12', y: 550 }),
      templateField('tenant', 'checkboxGroup', { label: 'Rooms', options: ['Kitchen', 'Garden'], y: 500 }),
      templateField('tenant', 'multiSelect', { label: 'Extras', options: ['Parking', 'Gym'], y: 450 }),
    ];
    const template = await account.request('POST', '/api/v1/templates', {
      json: { name: 'Lease', documentId: await uploadLease(account.request), roles: [{ name: 'tenant' }], fields },
    });
    expect(template.status, JSON.stringify(template.body)).to.equal(201);
    const send = (prefill: Record<string, unknown>) =>
      account.request('POST', '/api/v1/signatures', {
        json: { template_id: template.body.id, title: 'Lease', signers: [{ ...grace, role: 'tenant' }], prefill },
      });
    const refused = await send({ Rent: -5, Plan: 'Gold', Year: 1, Rooms: 'Kitchen', Extras: ['Gym', 'Gym'] });
    expect(refused.status).to.equal(400);
    expect(refused.body.details).to.deep.equal([
      'prefill.Rent must be at least 0',
      'prefill.Plan must be one of: Basic, Pro',
      'prefill.Year must name a field of the template that a sender may fill (text, date, checkbox, number, email, phone, radio, dropdown, multiSelect, checkboxGroup): its type is calculated',
      "prefill.Rooms must be a list of options: its field's type is checkboxGroup",
      'prefill.Extras must not choose an option twice',
    ]);
    expect((await send({ Plan: ['Pro'] })).body.details).to.deep.equal(["prefill.Plan must be text: its field's type is radio"]);
    const sent = await send({ Rent: 1200.5, Plan: 'Pro', Rooms: ['Garden', 'Kitchen'], Extras: ['Gym'] });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    const signer = signerOf(account, await signingLinkOf(account.request, sent.body.id, sent.body.signers[0].id));
    expect((await signer.sign({ '1': 5 })).body.details).to.deep.equal([
      'fieldValues.1 must not be given: the sender prefilled the number field "Rent" on page 1',
    ]);
    expect((await signer.sign({})).status).to.equal(200);
    const got = (await account.request('GET', `/api/v1/signatures/${sent.body.id}`)).body.signers[0].fields;
    // A selection keeps the options' order, as a signer's does.
    expect(got.map((field: { filled?: { value: unknown } }) => field.filled?.value)).to.deep.equal([
      undefined,
      1200.5,
      'Pro',
      14406,
      ['Kitchen', 'Garden'],
      ['Gym'],
    ]);
  });

  it('checks a hostile pattern in bounded time, while the service answers others', async () => {
    const account = await createTestAccount();
    const { signer } = await requestWith(account, [
      place(780, { type: 'signature', height: 40 }),
      place(700, { type: 'text', label: 'Code', pattern: '(a+)+$', patternMessage: 'must be only a' }),
    ]);
    const health = client(account.system.url!);
    const hostile = 'a'.repeat(400) + '!';
    const [refused, ...healthy] = await Promise.all([signer.sign({ '1': hostile }), ...Array.from({ length: 5 }, () => health('GET', '/healthz'))]);
    expect(refused.status).to.equal(400);
    expect(refused.body.details).to.deep.equal(['fieldValues.1 must be only a (the text field "Code" on page 1)']);
    expect(healthy.map((response) => response.status)).to.deep.equal([200, 200, 200, 200, 200]);
    expect((await signer.sign({ '1': 'a'.repeat(400) })).status).to.equal(200);
  });

  it('answers any JSON for any form field with 400 and the error body, never a 5xx, and stays signable', async () => {
    const account = await createTestAccount();
    const { signer } = await requestWith(account, everyType);
    const json = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }),
      fc.object({ maxDepth: 1 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('2', '3', '5', '7', '8', '9', '10', '15'), json, async (position, value) => {
        // A few random values fit (a "France", a true); each is sent with another field left out, so that none signs.
        const response = await signer.sign({ ...answers, '1': undefined, [position]: value });
        expect(response.status, JSON.stringify(value)).to.equal(400);
        expect(response.body.error).to.equal('validation_error');
        expect(response.body.details).to.be.an('array').with.length.above(0);
      }),
      { numRuns: 60 },
    );
    expect((await signer.sign(answers)).status).to.equal(200);
  });

  // Patterns from a small grammar that RE2 and JavaScript read alike, so that V8's RegExp is the oracle of a whole match.
  const patternOf = fc.letrec<{ pattern: string }>((tie) => ({
    pattern: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom('a', 'b', '.', '[ab]', '[^a]', '\\d', 'ab'),
      fc.tuple(tie('pattern'), fc.constantFrom('*', '+', '?', '{1,2}')).map(([inner, repeat]) => `(?:${inner})${repeat}`),
      fc.tuple(tie('pattern'), tie('pattern')).map(([a, b]) => `${a}${b}`),
      fc.tuple(tie('pattern'), tie('pattern')).map(([a, b]) => `(?:${a}|${b})`),
    ),
  })).pattern;

  it('checks any pattern as RE2 and JavaScript agree; any string as a pattern is a 400 naming it, or passes on to the unknown document’s 404 (fast-check)', async () => {
    const account = await createTestAccount();
    await fc.assert(
      fc.asyncProperty(patternOf, fc.stringMatching(/^[ab1 ]{1,6}$/), async (pattern, value) => {
        // Notes is required and left empty, so that no try signs: whether Code is named says how its pattern was read.
        const { signer } = await requestWith(account, [
          place(780, { type: 'signature', height: 40 }),
          place(700, { type: 'text', label: 'Code', pattern }),
          place(650, { type: 'text', label: 'Notes' }),
        ]);
        const response = await signer.sign({ '1': value });
        expect(response.status).to.equal(400);
        const named = response.body.details.some((detail: string) => detail.startsWith('fieldValues.1 '));
        expect(named, `${pattern} on "${value}"`).to.equal(
          // Blank is empty, and Code is required; else the trimmed value must match whole.
          value.trim() === '' || !new RegExp(`^(?:${pattern})$`).test(value.trim()),
        );
      }),
      { numRuns: 25 },
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), async (pattern) => {
        const response = await createWith(account, [place(700, { type: 'text', label: 'Code', pattern })]);
        expect(response.status, pattern).to.be.oneOf([400, 404]);
        if (response.status === 400)
          expect(response.body.details, pattern)
            .to.deep.equal([response.body.details[0]])
            .and.satisfy(([detail]: string[]) => detail.startsWith('signers.0.fields.0.pattern '));
      }),
      { numRuns: 60 },
    );
  });

  type Test = { field: 'Plan' | 'Note'; is: 'filled' | 'empty' } | { field: 'Plan' | 'Note'; is: 'equals' | 'notEquals'; values: string[] };
  type Condition = Test | { all: Condition[] } | { any: Condition[] };
  const testOf: fc.Arbitrary<Test> = fc.oneof(
    fc.record({ field: fc.constantFrom('Plan' as const, 'Note' as const), is: fc.constantFrom('filled' as const, 'empty' as const) }),
    fc.record({
      field: fc.constantFrom('Plan' as const, 'Note' as const),
      is: fc.constantFrom('equals' as const, 'notEquals' as const),
      values: fc.uniqueArray(fc.constantFrom('Basic', 'Pro', 'hello'), { minLength: 1, maxLength: 2 }),
    }),
  );
  const conditionOf = fc.letrec<{ condition: Condition }>((tie) => ({
    condition: fc.oneof(
      { depthSize: 'small', maxDepth: 3 },
      testOf,
      fc.array(tie('condition'), { minLength: 1, maxLength: 3 }).map((all) => ({ all })),
      fc.array(tie('condition'), { minLength: 1, maxLength: 3 }).map((any) => ({ any })),
    ),
  })).condition;
  /** The condition evaluated here, from docs/api.md's words: the oracle of which fields the server shows. */
  function holds(condition: Condition, values: Record<string, string | undefined>): boolean {
    if ('all' in condition) return condition.all.every((part) => holds(part, values));
    if ('any' in condition) return condition.any.some((part) => holds(part, values));
    const value = values[condition.field]?.trim() || undefined;
    if (condition.is === 'filled') return value !== undefined;
    if (condition.is === 'empty') return value === undefined;
    const listed = value !== undefined && 'values' in condition && condition.values.includes(value);
    return condition.is === 'equals' ? listed : value !== undefined && !listed;
  }

  it('shows, and so requires, a field exactly when its generated condition holds (fast-check)', async () => {
    const account = await createTestAccount();
    await fc.assert(
      fc.asyncProperty(conditionOf, fc.constantFrom(undefined, 'Basic', 'Pro'), fc.constantFrom(undefined, 'hello', ' '), async (showWhen, plan, note) => {
        const { signer } = await requestWith(account, [
          place(780, { type: 'signature', height: 40 }),
          place(700, { type: 'dropdown', label: 'Plan', options: ['Basic', 'Pro'], required: false }),
          place(650, { type: 'text', label: 'Note', required: false }),
          place(600, { type: 'text', label: 'Why', showWhen }),
          place(550, { type: 'text', label: 'Always' }),
        ]);
        const response = await signer.sign({ ...(plan ? { '1': plan } : {}), ...(note ? { '2': note } : {}) });
        expect(response.status, JSON.stringify(response.body)).to.equal(400);
        const required = response.body.details.some((detail: string) => detail.startsWith('fieldValues.3 '));
        expect(required, JSON.stringify({ showWhen, plan, note })).to.equal(holds(showWhen, { Plan: plan, Note: note }));
      }),
      { numRuns: 30 },
    );
  });
});
