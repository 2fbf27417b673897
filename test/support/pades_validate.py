"""The independent PAdES check of test/system/padesSeal.test.ts: pyHanko (scripts/provision.sh pyhanko)
validates a sealed PDF, once as a PDF signature and once in AdES mode (ETSI EN 319 102-1: the basic signature, and
with a timestamp the long-term archival process), and reads the signature's PAdES baseline level from what pyHanko
parsed of it (pyHanko 0.38 names no level itself).

    .cache/pyhanko/bin/python test/support/pades_validate.py SEALED.pdf [TRUSTED-ROOT.pem]

Prints one `name: value` line per finding; without a trusted root no certificate is trusted. Nothing is fetched:
the archival validation requires revocation data for every certificate and takes it from the file alone.
"""

import asyncio
import sys

from asn1crypto import pem, x509
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import async_validate_pdf_signature
from pyhanko.sign.validation.dss import DocumentSecurityStore
from pyhanko.sign.validation.ades import ades_basic_validation, ades_lta_validation
from pyhanko.sign.validation.policy_decl import (
    PdfSignatureValidationSpec,
    RevinfoOnlineFetchingRule,
    RevocationInfoGatheringSpec,
    SignatureValidationSpec,
)
from pyhanko_certvalidator import ValidationContext
from pyhanko_certvalidator.context import CertValidationPolicySpec
from pyhanko_certvalidator.policy_decl import NO_REVOCATION, REQUIRE_REVINFO, CertRevTrustPolicy
from pyhanko_certvalidator.registry import SimpleTrustManager


def read_roots(argv):
    if len(argv) < 3:
        return []
    with open(argv[2], 'rb') as file:
        data = file.read()
    return [x509.Certificate.load(pem.unarmor(data)[2] if pem.detect(data) else data)]


def baseline_level(reader, sig):
    """B-B as EN 319 142-1 § 6.3 asks: ETSI.CAdES.detached, signing-certificate-v2, no CMS signing-time; B-T with a
    signature timestamp; B-LT with a DSS; B-LTA with a document timestamp after the signature."""
    attrs = {attr['type'].native for attr in sig.signer_info['signed_attrs']}
    unsigned = {attr['type'].native for attr in (sig.signer_info['unsigned_attrs'] or [])}
    if sig.sig_object['/SubFilter'] != '/ETSI.CAdES.detached' or 'signing_certificate_v2' not in attrs or 'signing_time' in attrs:
        return 'none'
    if 'signature_time_stamp_token' not in unsigned:
        return 'B-B'
    if '/DSS' not in reader.root:
        return 'B-T'
    if not any(other.sig_object.get('/Type') == '/DocTimeStamp' for other in reader.embedded_signatures[1:]):
        return 'B-LT'
    return 'B-LTA'


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
        print(f'document timestamps: {sum(1 for other in reader.embedded_signatures if other.sig_object.get("/Type") == "/DocTimeStamp")}')
        if '/DSS' in reader.root:
            await offline(reader, sig, roots)
        if 'signature_time_stamp_token' in {attr['type'].native for attr in (sig.signer_info['unsigned_attrs'] or [])}:
            await archival(sig, roots)


async def offline(reader, sig, roots):
    """B-LT: the signature and its timestamp validated now, revocation required for every certificate, and taken
    from the file's Document Security Store alone (nothing fetched)."""
    context = DocumentSecurityStore.read_dss(reader).as_validation_context(
        {'trust_roots': roots, 'allow_fetching': False, 'revocation_mode': 'hard-fail'}
    )
    ts_context = DocumentSecurityStore.read_dss(reader).as_validation_context(
        {'trust_roots': roots, 'allow_fetching': False, 'revocation_mode': 'hard-fail'}
    )
    status = await async_validate_pdf_signature(sig, signer_validation_context=context, ts_validation_context=ts_context)
    print(f'offline with embedded revocation: {status.summary()}')


async def archival(sig, roots):
    """The long-term validation process (EN 319 102-1 § 5.6): every certificate's revocation from the file, nothing fetched."""
    policy = CertValidationPolicySpec(trust_manager=SimpleTrustManager.build(trust_roots=roots), revinfo_policy=CertRevTrustPolicy(REQUIRE_REVINFO))
    local_only = RevocationInfoGatheringSpec(online_fetching_rule=RevinfoOnlineFetchingRule.LOCAL_ONLY)
    spec = PdfSignatureValidationSpec(SignatureValidationSpec(cert_validation_policy=policy, revinfo_gathering_policy=local_only))
    result = await ades_lta_validation(sig, spec)
    print(f'AdES LTA indication: {result.ades_subindic.status.name}')
    print(f'AdES LTA subindication: {result.ades_subindic.standard_name}')
    print(f'AdES LTA failure: {result.failure_msg}')
    print(f'best signature time: {result.best_signature_time.isoformat() if result.best_signature_time else None}')


asyncio.run(main(sys.argv))
