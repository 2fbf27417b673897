import { expect } from 'chai';
import { RequestBodyHash } from '../../src/api/middleware/idempotency';

/** The hash of a body handed over in chunks of `size` bytes. */
function hashOf(contentType: string, body: string, size = body.length) {
  const hash = new RequestBodyHash(contentType);
  for (let at = 0; at < body.length; at += size) hash.update(Buffer.from(body.slice(at, at + size)));
  expect(hash.hex()).to.equal(undefined);
  hash.end();
  return hash.hex();
}

const multipart = (boundary: string, file: string) =>
  [`--${boundary}`, 'Content-Disposition: form-data; name="file"; filename="a.pdf"', 'Content-Type: application/pdf', '', file, `--${boundary}--`, ''].join(
    '\r\n',
  );

describe('RequestBodyHash (the body hash of an Idempotency-Key)', () => {
  it('is the SHA-256 of a body that is not multipart, however it is cut', () => {
    expect(hashOf('application/json', '{"a":1}')).to.equal('015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862');
    expect(hashOf('application/json', '{"a":1}', 2)).to.equal(hashOf('application/json', '{"a":1}'));
  });

  it('hashes a multipart body part by part: another boundary is the same body, another file is not', () => {
    const one = hashOf('multipart/form-data; boundary=aaaa', multipart('aaaa', '%PDF-1.7 one'));
    expect(hashOf('multipart/form-data; boundary="bbbbbbbbbbbb"', multipart('bbbbbbbbbbbb', '%PDF-1.7 one'))).to.equal(one);
    for (const size of [1, 3, 7, 11]) expect(hashOf('multipart/form-data; boundary=aaaa', multipart('aaaa', '%PDF-1.7 one'), size)).to.equal(one);
    expect(hashOf('multipart/form-data; boundary=aaaa', multipart('aaaa', '%PDF-1.7 two'))).not.to.equal(one);
  });

  it('tells apart bodies that differ only where a delimiter would be', () => {
    const type = 'multipart/form-data; boundary=aaaa';
    expect(hashOf(type, multipart('aaaa', 'x\r\n--aaaay'))).not.to.equal(hashOf(type, multipart('aaaa', 'xy')));
  });
});
