import { expect } from 'chai';
import fc from 'fast-check';
import { clientKey } from '../../src/console/limits';

// The console's limits count a client by its address: an IPv6 client by its /64, inside which a
// subscriber changes address for free. Every way of writing an address must give the same key.
describe('clientKey (console limits)', () => {
  const group = fc.integer({ min: 0, max: 0xffff });
  const address = fc.array(group, { minLength: 8, maxLength: 8 });
  const hex = (groups: number[]) => groups.map((value) => value.toString(16));

  /** Ways to write the same IPv6 address: full, zero-padded, upper case, compressed (as WHATWG URLs write it), the last 32 bits dotted. */
  const spellings = (groups: number[]) => {
    const full = hex(groups).join(':');
    const dotted = `${hex(groups.slice(0, 6)).join(':')}:${[groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.')}`;
    return [
      full,
      groups.map((value) => value.toString(16).padStart(4, '0')).join(':'),
      full.toUpperCase(),
      new URL(`http://[${full}]`).hostname.slice(1, -1),
      dotted,
    ];
  };

  it('gives an IPv6 address its /64, however it is written, and the same key for every address in it', () => {
    fc.assert(
      fc.property(address, fc.array(group, { minLength: 4, maxLength: 4 }), (groups, otherHost) => {
        const expected = `${hex(groups.slice(0, 4)).join(':')}::/64`;
        for (const spelling of [...spellings(groups), ...spellings([...groups.slice(0, 4), ...otherHost])]) {
          expect(clientKey(spelling), spelling).to.equal(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('tells networks apart', () => {
    fc.assert(
      fc.property(address, address, (one, other) => {
        fc.pre(hex(one.slice(0, 4)).join() !== hex(other.slice(0, 4)).join());
        expect(clientKey(hex(one).join(':'))).not.to.equal(clientKey(hex(other).join(':')));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps IPv4 as it is, also mapped into IPv6; ignores a zone; leaves what is no address alone', () => {
    expect(clientKey('203.0.113.9')).to.equal('203.0.113.9');
    expect(clientKey('::ffff:203.0.113.9')).to.equal('203.0.113.9');
    expect(clientKey('::1')).to.equal('0:0:0:0::/64');
    expect(clientKey('fe80::1%eth0')).to.equal('fe80:0:0:0::/64');
    expect(clientKey('not an address')).to.equal('not an address');
  });
});
