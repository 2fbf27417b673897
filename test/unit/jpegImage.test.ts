import { expect } from 'chai';
import fc from 'fast-check';
import { JpegError, readJpeg } from '../../src/pdf/jpegImage';
import { jpegOf } from '../support/uploads';

const limits = { maxSide: 10_000, maxPixels: 50_000_000 };

describe('readJpeg', () => {
  it('reads a baseline JPEG’s frame', () => {
    expect(readJpeg(jpegOf(64, 32), limits)).to.deep.equal({ width: 64, height: 32, components: 1 });
  });

  it('refuses a frame past the limits, a lossless frame and a file without its end', () => {
    expect(() => readJpeg(jpegOf(8, 8, { claim: { width: 20_000, height: 8 } }), limits)).to.throw(JpegError, /at most 10000 pixels a side/);
    expect(() => readJpeg(jpegOf(8, 8, { frame: 0xc3 }), limits)).to.throw(JpegError, 'be a baseline or progressive JPEG');
    expect(() => readJpeg(jpegOf(8, 8, { truncate: true }), limits)).to.throw(JpegError, 'be a JPEG image that can be decoded');
  });

  it('answers every cut and every changed byte with a frame or a JpegError, nothing else', () => {
    const jpeg = jpegOf(32, 16);
    for (let length = 0; length < jpeg.length; length++) expect(() => readJpeg(jpeg.subarray(0, length), limits)).to.throw(JpegError);
    fc.assert(
      fc.property(fc.nat(jpeg.length - 1), fc.integer({ min: 0, max: 255 }), (at, byte) => {
        const changed = Buffer.from(jpeg);
        changed[at] = byte;
        try {
          readJpeg(changed, limits);
        } catch (error) {
          expect(error).to.be.instanceOf(JpegError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
