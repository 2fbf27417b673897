"""Writes out what `openssl ts -verify` needs to check a sealed PDF's signature timestamp by itself
(test/system/padesSeal.test.ts): the token (token.der), the bytes it timestamps — the seal's signature
value (signature.bin) — and the certificates the token carries (tsa-certs.pem).

    .cache/pyhanko/bin/python test/support/pades_token.py SEALED.pdf OUT-DIR
"""

import os
import sys

from asn1crypto import pem
from pyhanko.pdf_utils.reader import PdfFileReader


def main(argv):
    with open(argv[1], 'rb') as file:
        sig = PdfFileReader(file).embedded_signatures[0]
        token = next(attr['values'][0] for attr in sig.signer_info['unsigned_attrs'] if attr['type'].native == 'signature_time_stamp_token')
        out = argv[2]
        with open(os.path.join(out, 'token.der'), 'wb') as target:
            target.write(token.dump())
        with open(os.path.join(out, 'signature.bin'), 'wb') as target:
            target.write(sig.signer_info['signature'].native)
        with open(os.path.join(out, 'tsa-certs.pem'), 'wb') as target:
            for cert in token['content']['certificates']:
                target.write(pem.armor('CERTIFICATE', cert.chosen.dump()))


main(sys.argv)
