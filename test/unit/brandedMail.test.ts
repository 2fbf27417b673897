import { expect } from 'chai';
import { contrastWithWhite } from '../../src/accounts/branding';
import { mailBrandOf, type MailBrand } from '../../src/domain/brand';
import { cancelledMail, completedMail, declinedMail, invitationMail, reminderMail, verificationCodeMail, type RenderedMail } from '../../src/mail/templates';

const brand: MailBrand = {
  name: 'Acme Rentals',
  fromName: 'Acme Rentals',
  logoUrl: 'https://sign.acme.example/brand-logos/abc',
  accentColor: '#1d4ed8',
  emailFooter: 'Acme Rentals Ltd, Leith.',
  supportEmail: 'help@acme.example',
  verifiedSender: 'owner@acme.example',
};
const identity = 'Sent via Signet on behalf of owner@acme.example, the verified e-mail address of the sending account.';
const sender = { name: 'Acme', email: 'owner@acme.example' };
const link = { signerName: 'Ada', sender, title: 'Lease', signingUrl: 'https://sign.acme.example/sign/t', expiresAt: new Date('2027-01-01T00:00:00Z') };

// Every e-mail a signer (or a cc) receives, with the brand set.
const signerMails: Record<string, (branded?: MailBrand) => RenderedMail> = {
  invitation: (branded) => invitationMail({ ...link, brand: branded }),
  approval: (branded) => invitationMail({ ...link, part: 'approver', brand: branded }),
  reminder: (branded) => reminderMail({ ...link, brand: branded }),
  'verification code': (branded) => verificationCodeMail({ signerName: 'Ada', sender, code: '123456', expiresAt: link.expiresAt, brand: branded }),
  completed: (branded) => completedMail({ recipientName: 'Ada', title: 'Lease', brand: branded }),
  declined: (branded) =>
    declinedMail({ recipientName: 'Ada', title: 'Lease', decliner: { name: 'Bo', email: 'bo@example.com' }, reason: 'No', brand: branded }),
  cancelled: (branded) => cancelledMail({ recipientName: 'Ada', title: 'Lease', sender, reason: 'Dates', brand: branded }),
};

describe('e-mails to signers', () => {
  for (const [kind, render] of Object.entries(signerMails)) {
    it(`${kind}: the brand's name, logo, footer and support address, and "Signet" only in the sender's identity`, () => {
      const mail = render(brand);
      expect([mail.subject, mail.text, mail.html].join('\n').replaceAll(identity, '')).not.to.include('Signet');
      expect(mail.text).to.include('Sent by Acme Rentals').and.include(brand.emailFooter!).and.include('Questions? Write to help@acme.example.');
      expect(mail.html).to.include(`<img src="${brand.logoUrl}" alt="Acme Rentals"`).and.include(brand.emailFooter!);
      // Without a brand, Signet's e-mail as before.
      expect(render().text).to.include('Sent by Signet');
      expect(render().html).not.to.include('<img');
    });

    it(`${kind}: ends with the account's verified address, after everything the brand says`, () => {
      const mail = render(brand);
      expect(mail.text.trimEnd().split('\n').at(-1)).to.equal(identity);
      expect(mail.html).to.include(`${identity}</td></tr>\n</table>`);
      expect(mail.html.indexOf(identity)).to.be.above(mail.html.indexOf(brand.emailFooter!));
      const unverified = render({ ...brand, verifiedSender: null });
      for (const part of [unverified.text, unverified.html]) {
        expect(part)
          .to.include('Sent via Signet on behalf of an account whose e-mail address is not verified.')
          .and.not.include('owner@acme.example, the verified');
      }
    });
  }

  it('the button takes the accent colour', () => {
    expect(invitationMail({ ...link, brand }).html).to.include('background:#1d4ed8;color:#ffffff;');
    expect(invitationMail(link).html).to.include('background:#2563eb;color:#ffffff;');
  });
});

describe('mailBrandOf', () => {
  const stored = { name: 'Acme Rentals', logoPath: null, accentColor: null, emailFooter: null, supportEmail: null };

  it('names the sender after the brand, and keeps the verified address apart from it', () => {
    expect(mailBrandOf(stored, 'https://sign.example', 'owner@acme.example')).to.include({
      name: 'Acme Rentals',
      fromName: 'Acme Rentals',
      verifiedSender: 'owner@acme.example',
    });
  });

  it('a name that may not be a From name (stored before the rule) is Signet’s, in From and in the text', () => {
    const legacy = mailBrandOf({ ...stored, name: 'PayPal Security <security@paypal.com>' }, 'https://sign.example', 'owner@acme.example');
    expect(legacy).to.include({ name: 'Signet', fromName: null });
    const mail = invitationMail({ ...link, brand: legacy });
    expect([mail.subject, mail.text, mail.html].join('\n')).not.to.include('PayPal').and.not.include('paypal');
  });
});

describe('contrastWithWhite', () => {
  it('is the WCAG 2.1 ratio', () => {
    expect(contrastWithWhite('#000000')).to.be.closeTo(21, 0.01);
    expect(contrastWithWhite('#ffffff')).to.be.closeTo(1, 0.01);
    expect(contrastWithWhite('#767676')).to.be.closeTo(4.54, 0.01);
    expect(contrastWithWhite('#777777')).to.be.below(4.5);
  });
});
