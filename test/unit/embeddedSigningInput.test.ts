import { expect } from 'chai';
import { EmbeddedSigningCreateSchema, plainHttpProblems } from '../../src/signingRequests/schema';

describe('embedded signing input', () => {
  it('keeps origins as browsers write them: lower-case, without the default port, each once', () => {
    const parsed = EmbeddedSigningCreateSchema.parse({
      allowedOrigins: ['https://App.Example.COM', 'https://app.example.com:443', 'https://app.example.com:8443', 'http://localhost:3000'],
    });
    expect(parsed.allowedOrigins).to.deep.equal(['https://app.example.com', 'https://app.example.com:8443', 'http://localhost:3000']);
    expect(parsed.expiresInSeconds).to.equal(300);
  });

  it('refuses plain http with NODE_ENV=production, loopback or not, and allows it in development', () => {
    const urls: [string, string | undefined][] = [
      ['allowedOrigins.0', 'http://localhost:3000'],
      ['allowedOrigins.1', 'https://app.example.com'],
      ['returnUrl', undefined],
      ['redirectUrl', 'http://127.0.0.1/done'],
    ];
    expect(plainHttpProblems(true, urls)).to.deep.equal([]);
    expect(plainHttpProblems(false, urls)).to.deep.equal([
      'allowedOrigins.0 must be https:// (http:// to the loopback is for development only)',
      'redirectUrl must be https:// (http:// to the loopback is for development only)',
    ]);
  });
});
