import { expect } from 'chai';
import { cachedPatternCount, checkValue, compiledPattern, rulesProblems, type FieldRules } from '../../src/fields/rules';
import { FieldRulesSchema } from '../../src/fields/schemas';

/** The schema's messages, as "path message". */
function schemaProblems(input: unknown): string[] {
  const result = FieldRulesSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`.trim());
}

const yesNo = ['Yes', 'No'];
const colours = ['red', 'green', 'blue'];

describe('field rules: the schema', () => {
  it('accepts every rule within its bounds', () => {
    const rules = { required: false, minLength: 0, maxLength: 10000, pattern: '[A-Z]{2}\\d+', patternMessage: 'must be a code like AB12' };
    expect(schemaProblems(rules)).to.deep.equal([]);
    expect(schemaProblems({ min: -1.5, max: 1.5, step: 0.1, decimals: 10, minSelected: 0, maxSelected: 100 })).to.deep.equal([]);
    expect(schemaProblems({})).to.deep.equal([]);
  });

  it('refuses a lower bound above its upper one', () => {
    expect(schemaProblems({ minLength: 5, maxLength: 4 })).to.deep.equal(['maxLength must be at least minLength (5)']);
    expect(schemaProblems({ min: 10, max: 1 })).to.deep.equal(['max must be at least min (10)']);
    expect(schemaProblems({ minSelected: 3, maxSelected: 2 })).to.deep.equal(['maxSelected must be at least minSelected (3)']);
  });

  it('refuses a pattern RE2 does not accept, saying why', () => {
    expect(schemaProblems({ pattern: '(a)\\1' })).to.deep.equal(['pattern must be a regular expression RE2 accepts: invalid escape sequence: `\\1`']);
    expect(schemaProblems({ pattern: '(?=a)b' })).to.deep.equal([
      'pattern must be a regular expression RE2 accepts: invalid or unsupported Perl syntax: `(?=`',
    ]);
    expect(schemaProblems({ pattern: '' })).to.deep.equal(['pattern must not be empty']);
    expect(schemaProblems({ pattern: 'a'.repeat(501) })).to.deep.equal(['pattern must be at most 500 characters']);
  });

  it('refuses unknown keys, and values out of bounds or of the wrong type', () => {
    expect(schemaProblems({ required: true, maxlength: 3 })).to.deep.equal(['has unknown field(s): maxlength']);
    expect(schemaProblems('required')).to.deep.equal(['must be an object']);
    expect(
      schemaProblems({ required: 'yes', minLength: 1.5, maxLength: 10001, decimals: 11, step: 0, minSelected: -1, maxSelected: 101, min: 'x' }),
    ).to.deep.equal([
      'required must be true or false',
      'minLength must be a whole number from 0 to 10000',
      'maxLength must be a whole number from 0 to 10000',
      'min must be a number',
      'step must be greater than 0',
      'decimals must be a whole number from 0 to 10',
      'minSelected must be a whole number from 0 to 100',
      'maxSelected must be a whole number from 0 to 100',
    ]);
    expect(schemaProblems({ patternMessage: 'x'.repeat(201), max: Infinity })).to.deep.equal([
      'patternMessage must be at most 200 characters',
      'max must be a number',
    ]);
  });
});

describe('field rules: which rules apply to which type', () => {
  it('names each rule given for a type it does not apply to', () => {
    expect(rulesProblems('number', { pattern: '\\d+', required: true })).to.deep.equal(['pattern does not apply to a number field']);
    expect(rulesProblems('email', { min: 1, minSelected: 1 })).to.deep.equal([
      'min does not apply to an email field',
      'minSelected does not apply to an email field',
    ]);
    expect(rulesProblems('phone', { maxLength: 20 })).to.deep.equal(['maxLength does not apply to a phone field']);
    expect(rulesProblems('radio', { maxSelected: 1 }, yesNo)).to.deep.equal(['maxSelected does not apply to a radio field']);
    expect(rulesProblems('text', { patternMessage: 'must be a code' })).to.deep.equal(['patternMessage needs a pattern']);
    expect(rulesProblems('text', { minLength: 1, maxLength: 5, pattern: 'a+' })).to.deep.equal([]);
    expect(rulesProblems('number', { min: 0, max: 5, step: 0.5, decimals: 1 })).to.deep.equal([]);
  });

  it('requires options for the choice types, and refuses them for the others', () => {
    expect(rulesProblems('dropdown', {})).to.deep.equal(['options are required for a dropdown field']);
    expect(rulesProblems('checkboxGroup', {}, [])).to.deep.equal(['options are required for a checkboxGroup field']);
    expect(rulesProblems('text', {}, yesNo)).to.deep.equal(['options do not apply to a text field']);
    expect(rulesProblems('multiSelect', { minSelected: 1, maxSelected: 3 }, colours)).to.deep.equal([]);
  });

  it('refuses empty, blank, long, repeated and too many options, and counts beyond them', () => {
    expect(rulesProblems('radio', {}, ['Yes', '', ' ', 'x'.repeat(201), 'Yes'])).to.deep.equal([
      'options.1 must not be empty',
      'options.2 must not be empty',
      'options.3 must be at most 200 characters',
      'options.4 ("Yes") is listed twice',
    ]);
    const many = Array.from({ length: 101 }, (_, index) => `option ${index}`);
    expect(rulesProblems('dropdown', {}, many)).to.deep.equal(['options must be at most 100']);
    expect(rulesProblems('multiSelect', { minSelected: 4, maxSelected: 5 }, colours)).to.deep.equal([
      'minSelected must be at most the number of options (3)',
      'maxSelected must be at most the number of options (3)',
    ]);
  });
});

describe('field rules: an empty value', () => {
  it('is required unless the rules say otherwise', () => {
    for (const empty of [undefined, null, '', '   ', []]) {
      expect(checkValue('text', {}, empty)).to.deep.equal({ problem: 'is required' });
      expect(checkValue('number', { required: true }, empty)).to.deep.equal({ problem: 'is required' });
      expect(checkValue('phone', { required: false }, empty)).to.deep.equal({});
    }
    expect(checkValue('multiSelect', {}, '[]', colours)).to.deep.equal({ problem: 'is required' });
    expect(checkValue('checkboxGroup', { required: false, minSelected: 2 }, '[]', colours)).to.deep.equal({});
  });
});

describe('field rules: text', () => {
  it('is stored trimmed', () => {
    expect(checkValue('text', {}, '  Jane Doe \n')).to.deep.equal({ stored: 'Jane Doe' });
    expect(checkValue('text', {}, 42)).to.deep.equal({ problem: 'must be text' });
  });

  it('counts its length in code points, after trimming', () => {
    const rules = { minLength: 2, maxLength: 3 };
    expect(checkValue('text', rules, ' 😀😀😀 ')).to.deep.equal({ stored: '😀😀😀' });
    expect(checkValue('text', rules, '😀😀😀😀')).to.deep.equal({ problem: 'must be at most 3 characters' });
    expect(checkValue('text', rules, ' a ')).to.deep.equal({ problem: 'must be at least 2 characters' });
    expect(checkValue('text', {}, 'a'.repeat(10001))).to.deep.equal({ problem: 'must be at most 10000 characters' });
  });

  it('must match the whole pattern, with the sender’s message when given', () => {
    expect(checkValue('text', { pattern: '[A-Z]{2}\\d+' }, 'AB12')).to.deep.equal({ stored: 'AB12' });
    expect(checkValue('text', { pattern: '[A-Z]{2}\\d+' }, 'xAB12')).to.deep.equal({ problem: 'must match the pattern [A-Z]{2}\\d+' });
    expect(checkValue('text', { pattern: '[A-Z]{2}\\d+' }, 'AB12x')).to.deep.equal({ problem: 'must match the pattern [A-Z]{2}\\d+' });
    expect(checkValue('text', { pattern: '\\d+', patternMessage: 'must be digits only' }, '12a')).to.deep.equal({ problem: 'must be digits only' });
  });

  it('finishes a pattern that would backtrack catastrophically in a JavaScript RegExp', () => {
    expect(checkValue('text', { pattern: '(a+)+$' }, 'a'.repeat(30) + '!')).to.deep.equal({ problem: 'must match the pattern (a+)+$' });
    expect(checkValue('text', { pattern: '(a|aa)+' }, 'a'.repeat(5000) + 'b')).to.deep.equal({ problem: 'must match the pattern (a|aa)+' });
  });
});

describe('field rules: the pattern cache', () => {
  it('compiles a pattern once, and holds at most 100', () => {
    expect(compiledPattern('x+y')).to.equal(compiledPattern('x+y'));
    for (let index = 0; index < 250; index++) checkValue('text', { pattern: `p${index}` }, `p${index}`);
    expect(cachedPatternCount()).to.equal(100);
    // The most recently used stay: p249 is still the one compiled before.
    expect(compiledPattern('p249')).to.equal(compiledPattern('p249'));
    expect(cachedPatternCount()).to.equal(100);
  });
});

describe('field rules: e-mail addresses', () => {
  it('are stored trimmed, with the domain lower-cased', () => {
    expect(checkValue('email', {}, '  Jane.Doe+sign@Example.COM ')).to.deep.equal({ stored: 'Jane.Doe+sign@example.com' });
    expect(checkValue('email', {}, 'a@b-c.d.co')).to.deep.equal({ stored: 'a@b-c.d.co' });
    expect(checkValue('email', {}, 'ivan@xn--80aswg.xn--p1ai')).to.deep.equal({ stored: 'ivan@xn--80aswg.xn--p1ai' }); // сайт.рф, as DNS writes it
  });

  it('are refused without one @, a local part of 1–64 characters without spaces, or a domain of labels and a TLD of letters', () => {
    const bad = ['jane', 'jane@', '@example.com', 'a@b@example.com', 'jane doe@example.com', 'jane\u0007@example.com', 'jane@example', 'jane@example.c'];
    bad.push('jane@exa_mple.com', 'jane@-example.com', 'jane@example-.com', 'jane@example..com', 'jane@example.c0m', `${'a'.repeat(65)}@example.com`);
    for (const value of bad) {
      const echoed = value.length > 40 ? `${value.slice(0, 40)}…` : value;
      expect(checkValue('email', {}, value).problem, value).to.equal(`must be an e-mail address (name@example.com), not "${echoed}"`);
    }
    expect(checkValue('email', {}, `a@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(63)}.com`).problem).to.match(
      /^must be an e-mail address/,
    );
    expect(checkValue('email', {}, ['a@example.com'])).to.deep.equal({ problem: 'must be text' });
  });

  it('take the length and pattern rules too', () => {
    expect(checkValue('email', { pattern: '.*@example\\.com', patternMessage: 'must be an example.com address' }, 'jane@EXAMPLE.com')).to.deep.equal({
      stored: 'jane@example.com',
    });
    expect(checkValue('email', { pattern: '.*@example\\.com', patternMessage: 'must be an example.com address' }, 'jane@other.com')).to.deep.equal({
      problem: 'must be an example.com address',
    });
    expect(checkValue('email', { maxLength: 10 }, 'jane@example.com')).to.deep.equal({ problem: 'must be at most 10 characters' });
  });

  it('never echo more than 40 characters of the value', () => {
    const problem = checkValue('email', {}, 'x'.repeat(1000)).problem!;
    expect(problem).to.equal(`must be an e-mail address (name@example.com), not "${'x'.repeat(40)}…"`);
  });
});

describe('field rules: phone numbers', () => {
  it('are stored in E.164', () => {
    expect(checkValue('phone', {}, '+4930123456')).to.deep.equal({ stored: '+4930123456' });
    expect(checkValue('phone', {}, ' +49 (30) 123-456 ')).to.deep.equal({ stored: '+4930123456' });
    expect(checkValue('phone', {}, '+1 212.555.0123')).to.deep.equal({ stored: '+12125550123' });
    expect(checkValue('phone', {}, '+44 20 7946 0958')).to.deep.equal({ stored: '+442079460958' });
  });

  it('need their country code, written with +', () => {
    for (const value of ['030 123456', '004930123456', '49 30 123456', '+ 49 30 123456', '+49 30 123456 ext. 5', '+49/30/123456']) {
      expect(checkValue('phone', {}, value), value).to.deep.equal({ problem: 'must be a phone number with its country code (+49 …)' });
    }
    expect(checkValue('phone', {}, 4930123456)).to.deep.equal({ problem: 'must be a phone number with its country code (+49 …)' });
  });

  it('must be numbers libphonenumber knows as valid', () => {
    expect(checkValue('phone', {}, '+491')).to.deep.equal({ problem: 'must be a valid phone number, not "+491"' });
    expect(checkValue('phone', {}, '+999 123456')).to.deep.equal({ problem: 'must be a valid phone number, not "+999 123456"' });
  });
});

describe('field rules: numbers', () => {
  it('are JS numbers or plain decimals, stored in canonical form', () => {
    expect(checkValue('number', {}, '12.50')).to.deep.equal({ stored: '12.5' });
    expect(checkValue('number', {}, ' 007 ')).to.deep.equal({ stored: '7' });
    expect(checkValue('number', {}, '-0.0')).to.deep.equal({ stored: '0' });
    expect(checkValue('number', {}, '-3.25')).to.deep.equal({ stored: '-3.25' });
    expect(checkValue('number', {}, 12.5)).to.deep.equal({ stored: '12.5' });
    expect(checkValue('number', {}, 1e21)).to.deep.equal({ stored: '1000000000000000000000' });
    expect(checkValue('number', {}, -1.5e-7)).to.deep.equal({ stored: '-0.00000015' });
  });

  it('are refused with an exponent, hex, separators or no digits', () => {
    for (const value of ['1e3', '0x10', '1,000', '1 000', '.5', '5.', '+5', 'Infinity', 'NaN', '--1', '12abc', '1'.repeat(41)]) {
      expect(checkValue('number', {}, value), value).to.deep.equal({ problem: 'must be a number, written like 1234.5' });
    }
    for (const value of [NaN, Infinity, true, ['1']])
      expect(checkValue('number', {}, value)).to.deep.equal({ problem: 'must be a number, written like 1234.5' });
  });

  it('keep to decimals, min and max', () => {
    expect(checkValue('number', { decimals: 2 }, '1.255')).to.deep.equal({ problem: 'must be a number of at most 2 decimals' });
    expect(checkValue('number', { decimals: 2 }, '1.2500')).to.deep.equal({ stored: '1.25' });
    expect(checkValue('number', { decimals: 0 }, '3.5')).to.deep.equal({ problem: 'must be a whole number' });
    expect(checkValue('number', { min: 0.1, max: 0.3 }, '0.1')).to.deep.equal({ stored: '0.1' });
    expect(checkValue('number', { min: 0.1, max: 0.3 }, '0.3')).to.deep.equal({ stored: '0.3' });
    expect(checkValue('number', { min: 0.1, max: 0.3 }, '0.0999999999999999999')).to.deep.equal({ problem: 'must be at least 0.1' });
    expect(checkValue('number', { min: 0.1, max: 0.3 }, '0.3000000000000000001')).to.deep.equal({ problem: 'must be at most 0.3' });
    expect(checkValue('number', { min: -5 }, -6)).to.deep.equal({ problem: 'must be at least -5' });
  });

  it('keep to step, exactly and counted from min', () => {
    expect(checkValue('number', { step: 0.1 }, '0.3')).to.deep.equal({ stored: '0.3' });
    expect(checkValue('number', { step: 0.1 }, 0.3)).to.deep.equal({ stored: '0.3' });
    expect(checkValue('number', { step: 0.1 }, '0.35')).to.deep.equal({ problem: 'must be a multiple of 0.1' });
    expect(checkValue('number', { step: 0.5 }, '-1.5')).to.deep.equal({ stored: '-1.5' });
    expect(checkValue('number', { step: 2, min: 1 }, '7')).to.deep.equal({ stored: '7' });
    expect(checkValue('number', { step: 2, min: 1 }, '6')).to.deep.equal({ problem: 'must be 1 plus a multiple of 2' });
    expect(checkValue('number', { step: 0.25, min: 0.1 }, '0.85')).to.deep.equal({ stored: '0.85' });
  });
});

describe('field rules: radio buttons and dropdowns', () => {
  it('hold exactly one of the options, as listed', () => {
    expect(checkValue('radio', {}, 'Yes', yesNo)).to.deep.equal({ stored: 'Yes' });
    expect(checkValue('dropdown', {}, 'green', colours)).to.deep.equal({ stored: 'green' });
    for (const value of ['yes', 'Maybe', ' Yes', ['Yes'], 1, true]) {
      expect(checkValue('radio', {}, value, yesNo)).to.deep.equal({ problem: 'must be one of: Yes, No' });
    }
  });

  it('list at most ten options in the message', () => {
    const options = Array.from({ length: 12 }, (_, index) => String(index + 1));
    expect(checkValue('dropdown', {}, '13', options)).to.deep.equal({ problem: 'must be one of: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …' });
  });
});

describe('field rules: checkbox groups and multi-selects', () => {
  const rules: FieldRules = { minSelected: 2, maxSelected: 2 };

  it('hold distinct options, stored as a JSON array in option order', () => {
    expect(checkValue('multiSelect', {}, ['blue', 'red'], colours)).to.deep.equal({ stored: '["red","blue"]' });
    expect(checkValue('checkboxGroup', {}, '["green"]', colours)).to.deep.equal({ stored: '["green"]' });
    expect(checkValue('checkboxGroup', rules, ['red', 'blue'], colours)).to.deep.equal({ stored: '["red","blue"]' });
  });

  it('are refused with unknown or repeated options, or when not a list', () => {
    expect(checkValue('multiSelect', {}, ['red', 'pink'], colours)).to.deep.equal({ problem: 'must be chosen from: red, green, blue' });
    expect(checkValue('multiSelect', {}, '[1]', colours)).to.deep.equal({ problem: 'must be chosen from: red, green, blue' });
    expect(checkValue('multiSelect', {}, ['red', 'red'], colours)).to.deep.equal({ problem: 'must not choose an option twice' });
    for (const value of ['red', '["red"', '{"0":"red"}', 3, true]) {
      expect(checkValue('checkboxGroup', {}, value, colours), String(value)).to.deep.equal({ problem: 'must be a list of options' });
    }
  });

  it('count against minSelected and maxSelected', () => {
    expect(checkValue('checkboxGroup', rules, ['red'], colours)).to.deep.equal({ problem: 'must have at least 2 options chosen' });
    expect(checkValue('checkboxGroup', rules, colours, colours)).to.deep.equal({ problem: 'must have at most 2 options chosen' });
    expect(checkValue('multiSelect', { maxSelected: 1 }, ['red', 'blue'], colours)).to.deep.equal({ problem: 'must have at most 1 option chosen' });
  });
});
