"""The independent PAdES check of test/system/padesSeal.test.ts: pyHanko (scripts/provision.sh pyhanko)
validates a sealed PDF, once as a PDF signature and once in AdES mode (ETSI EN 319 102-1, basic signature), and reads the
signature's PAdES baseline level from what pyHanko parsed of it (pyHanko 0.38 names no level itself).

    .cache/pyhanko/bin/python test/support/pades_validate.py SEALED.pdf [TRUSTED-ROOT.pem]

Prints one `name: value` line per finding; without a trusted root no certificate is trusted.
"""

import asyncio
import sys

from asn1crypto import pem, x509
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import async_validate_pdf_signature
from pyhanko.sign.validation.ades import ades_basic_validation
from pyhanko.sign.validation.policy_decl import SignatureValidationSpec
from pyhanko_certvalidator import ValidationContext
from pyhanko_certvalidator.context import CertValidationPolicySpec
from pyhanko_certvalidator.policy_decl import NO_REVOCATION, CertRevTrustPolicy
from pyhanko_certvalidator.registry import SimpleTrustManager


def read_roots(argv):
    if len(argv) < 3:
        return []
    with open(argv[2], 'rb') as file:
        data = file.read()
    return [x509.Certificate.load(pem.unarmor(data)[2] if pem.detect(data) else data)]


def baseline_level(reader, sig):
    """B-B as EN 319 142-1 § 6.3 asks: ETSI.CAdES.detached, signing-certificate-v2, no CMS signing-time."""
    attrs = {attr['type'].native for attr in sig.signer_info['signed_attrs']}
    unsigned = {attr['type'].native for attr in (sig.signer_info['unsigned_attrs'] or [])}
    if sig.sig_object['/SubFilter'] != '/ETSI.CAdES.detached' or 'signing_certificate_v2' not in attrs or 'signing_time' in attrs:
        return 'none'
    if 'signature_time_stamp_token' not in unsigned:
        return 'B-B'
    return 'B-T or above'


async def main(argv):
    roots = read_roots(argv)
    with open(argv[1], 'rb') as file:
        reader = PdfFileReader(file)
        sig = reader.embedded_signatures[0]
        print(f"SubFilter: {sig.sig_object['/SubFilter']}")
        print(f"signed attributes: {', '.join(sorted(attr['type'].native for attr in sig.signer_info['signed_attrs']))}")
        print(f'PAdES baseline level: {baseline_level(reader, sig)}')
        print(f'document security store: {"/DSS" in reader.root}')

        status = await async_validate_pdf_signature(sig, ValidationContext(trust_roots=roots))
        print(f'intact: {status.intact}')
        print(f'valid: {status.valid}')
        print(f'trusted: {status.trusted}')
        print(f'summary: {status.summary()}')

        policy = CertValidationPolicySpec(
            trust_manager=SimpleTrustManager.build(trust_roots=roots), revinfo_policy=CertRevTrustPolicy(NO_REVOCATION)
        )
        # Validation of basic signatures (EN 319 102-1 § 5.3), the process for B-B: the later ones ask for a timestamp.
        spec = SignatureValidationSpec(cert_validation_policy=policy)
        result = await ades_basic_validation(sig.signed_data, spec, raw_digest=sig.compute_digest())
        print(f'AdES indication: {result.ades_subindic.status.name}')
        print(f'AdES subindication: {result.ades_subindic.standard_name}')


asyncio.run(main(sys.argv))
