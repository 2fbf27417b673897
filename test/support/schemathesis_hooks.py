"""Schemathesis hooks of test/system/schemathesis.test.ts.

Some rules of the API cannot be written in JSON Schema, so the OpenAPI document states them in words
(a description): a date range whose end comes after its start, an expiry in the future, a PDF that is
a PDF. Data the fuzzer generates from the schema alone may break one; the service's 400 that names
exactly such a rule is then the right answer, not a "schema-valid request rejected" failure. Every
other failure is kept, and so is a 400 with any detail not listed here.
"""

import re
import uuid

import schemathesis
from schemathesis.generation.meta import CoveragePhaseData, CoverageScenario
from schemathesis.openapi.checks import RejectedPositiveData

DATE_ORDER = r"createdBefore must be after createdAfter"
PDF = r"content (must be a PDF file|is a truncated PDF \(no %%EOF marker\)|is not a parsable PDF(: .+)?|must not be an encrypted PDF|must be a PDF with at least one page|exceeds the limit of .+ \([A-Z_]+\))"
PUBLIC_ADDRESS = r"url must not point to (a|an|localhost) ?.*"
# A host name of the pattern's shape whose xn-- label is not valid punycode.
PUNYCODE_ORIGIN = r"allowedOrigins\.\d+ must be an origin whose host name is valid \(an xn-- label must be valid punycode\)"
PUNYCODE_URL = r"(returnUrl|redirectUrl) must be a URL whose host name is valid \(an xn-- label must be valid punycode\)"
# A signer's (or role's) fields as one form (src/documents/form.ts): which options, rules, formula and text fit which
# type, and the names conditions and formulas give, are said in the fields' descriptions.
FIELD = r"(signers\.\d+\.)?fields\.\d+"
RULE = r"(options|optionBoxes|minLength|maxLength|pattern|patternMessage|min|max|step|decimals|minSelected|maxSelected|showWhen|formula|text)"
FORM = [
    FIELD + r"\." + RULE + r" does not apply to an? \w+ field",
    FIELD + r" " + RULE + r" does not apply to an? \w+ field",
    FIELD + r"\.text is required: it is a staticText field",
    FIELD + r"\.maxLength must be at most \d+: a text field holds at most \d+ characters",
    FIELD + r"\.optionBoxes must have one box per option: .+",
    FIELD + r"\.label must be unique among the signer's fields, .+",
    FIELD + r" patternMessage needs a pattern",
    FIELD + r" (maxLength|max|maxSelected) must be at least (minLength|min|minSelected) \(.+\)",
    FIELD + r" options are required for an? \w+ field",
    FIELD + r" options do not apply to an? \w+ field",
    FIELD + r" option \d+ .+",
    FIELD + r" (minSelected|maxSelected) must be at most the number of options \(\d+\)",
    FIELD + r" needs a formula: it is calculated",
    FIELD + r" has a formula that .+",
    FIELD + r" formula does not apply to an? \w+ field",
    r"(signers\.\d+\.fields|fields of the role .+) (the (condition|calculation) of .+|\".+: conditions and calculations must not go round in a circle|the key .+ is used by more than one field)",
]
TEMPLATE_LAYOUT = [
    # "each once" (uniqueItems cannot say it of objects that differ only in other properties)
    r"documents\.\d+\.document_id is a duplicate: each document is copied once",
    r"documentId must name a document (of this account|whose PDF has been uploaded)",
    r"roles must have at least one role( that is not cc)?",
    r"fields\.\d+\.document_id must be one of the template’s documents: .+",
    r"fields\.\d+\.role cannot be .+, a cc: only a signer's role has fields",
    r"fields\.\d+\.document_id is required when the template has several documents",
    r"fields\.\d+ is on the document .+, which documents leaves out: give fields with documents",
    r".+\.routingOrder is required once another role has one",
    r"documents must have at most \d+ pages in all \(REQUEST_MAX_PAGES\); these have \d+",
    r".+\.name must be unique: .+",
    r".+\.role must be one of the roles \(.*\): .+",
    r".+ must lie inside page \d+ \(.+ points\)",
    r".+\.page must be at most \d+: the PDF has \d+ page\(s\)",
    r".+\.label must be unique within the template: .+",
    r".+ \(.+\) must have at least one signature field",
    r"roles must have at most \d+ items, those its text tags name included .+",
    r"fields must have at most \d+ items, those of its text tags included: .+",
    r".+ \(.+\) must have at most \d+ fields \(a request's signer has at most \d+\): it has \d+",
    r".+\.verification cannot be given to a cc's role: a cc never opens a signing page",
    *FORM,
]
BRANDING = [
    r"accentColor must have a contrast ratio of at least 4\.5:1 against white .+",
    r"logo must .+",
]

# The document's general rules (its description), for every operation with a JSON body.
GENERAL_RULES = [
    r"body must not contain a field named __proto__",
    r".+ contains characters that cannot be shown in the signed PDF: .+",
    r".+ must be well-formed Unicode \(it has an unpaired UTF-16 surrogate\)",
    r".+ must not have a field name with an unpaired UTF-16 surrogate",
    r".+ must not have a field name with NUL characters",
    r"body must be nested at most \d+ levels deep",
]

# Operation → the details strings (regular expressions) of its rules that only words describe.
RULES_IN_WORDS = {
    "GET /documents": [DATE_ORDER],
    "GET /signatures": [DATE_ORDER],
    "GET /search": [DATE_ORDER, r"sort relevance needs q", r"q must contain a letter or a digit", r"cursor is not a valid cursor", r"cursor belongs to another sort order"],
    "GET /dashboard/signing-breakdown": [r"to must be after from"],
    "POST /documents": [PDF, r"fileSize must equal the size of the content \(\d+ bytes\)"],
    "PUT /documents/{id}/file": [PDF, r"fileSize must equal the size of the content \(\d+ bytes\)"],
    "POST /verify": [PDF, r"content holds more than \d+ signatures", r"file is required"],
    "POST /signatures": [
        r"expiresAt must be in the future",
        r"expiresAt must be at most \d+ days ahead",
        r"signers\.\d+\.email is a duplicate: each signer needs their own e-mail address",
        r"signers\.\d+\.fields\.\d+ must lie inside page \d+ \(.+ points\)",
        r"signers\.\d+\.fields\.\d+\.page must be at most \d+: the document has \d+ page\(s\)",
        *FORM,
        # A request from a template: its roles decide each recipient's kind and step.
        r"signers\.\d+\.(recipientType|routingOrder) must be left out or be the role's: .+",
        r"signers\.\d+\.verification cannot be given to a cc: .+",
        r"signers\.\d+\.verification\.method must be left out or be the role's: .+",
        r"signers\.\d+\.verification\.code is required: the role .+ asks for an access code, which a template cannot hold .+",
        r"signingOrder cannot be sequential: the template’s roles have routing orders, which are the steps",
        PUNYCODE_URL,
    ],
    "POST /signatures/{id}/signers/{signerId}/embed": [PUNYCODE_ORIGIN, PUNYCODE_URL],
    "POST /templates": TEMPLATE_LAYOUT,
    "PATCH /templates/{id}": TEMPLATE_LAYOUT,
    "GET /templates/{id}/preview.png": [r"page must be at most \d+: .+ has \d+ page\(s\)", r"documentId must be one of the template’s documents: .+"],
    "PATCH /account/branding": BRANDING,
    "POST /api-keys": [r"expiresAt must be in the future"],
    "POST /webhooks": [PUBLIC_ADDRESS],
    "PATCH /webhooks/{id}": [PUBLIC_ADDRESS],
}

# The PDF upload takes raw bytes, as application/octet-stream does.
schemathesis.serializer.alias("application/pdf", "application/octet-stream")


IDEMPOTENCY_KEY = re.compile(r"[\x20-\x7e]{1,255}")


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    # A rule in words (the Idempotency-Key's description): a key is for one request, and the same key on
    # another body is 422. The fuzzer draws keys from few examples; each valid one becomes a key of its own,
    # and an invalid one is sent as drawn (400). A case that leaves out a header (Authorization) is sent
    # untouched: an edited case is checked again, and would be sent with the key it meant to leave out.
    data = case.meta.phase.data if case.meta else None
    if isinstance(data, CoveragePhaseData) and data.scenario == CoverageScenario.MISSING_PARAMETER:
        return
    for name in list(case.headers or {}):
        if name.lower() == "idempotency-key" and IDEMPOTENCY_KEY.fullmatch(str(case.headers[name])):
            case.headers[name] = str(uuid.uuid4())


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    if not isinstance(failure, RejectedPositiveData) or response.status_code != 400:
        return True
    rules = GENERAL_RULES + RULES_IN_WORDS.get(case.operation.label, [])
    try:
        details = response.json().get("details") or []
    except ValueError:
        return True
    stated_in_words = bool(details) and all(any(re.fullmatch(rule, detail, re.DOTALL) for rule in rules) for detail in details)
    return not stated_in_words
