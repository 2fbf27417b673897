"""Schemathesis hooks of test/system/schemathesis.test.ts.

Some rules of the API cannot be written in JSON Schema, so the OpenAPI document states them in words
(a description): a date range whose end comes after its start, an expiry in the future, a PDF that is
a PDF. Data the fuzzer generates from the schema alone may break one; the service's 400 that names
exactly such a rule is then the right answer, not a "schema-valid request rejected" failure. Every
other failure is kept, and so is a 400 with any detail not listed here.
"""

import re

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData

DATE_ORDER = r"createdBefore must be after createdAfter"
PDF = r"content (must be a PDF file|is a truncated PDF \(no %%EOF marker\)|is not a parsable PDF(: .+)?|must not be an encrypted PDF|must be a PDF with at least one page|exceeds the limit of .+ \([A-Z_]+\))"
PUBLIC_ADDRESS = r"url must not point to (a|an|localhost) ?.*"
TEMPLATE_LAYOUT = [
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
    "POST /signatures": [
        r"expiresAt must be in the future",
        r"expiresAt must be at most \d+ days ahead",
        r"signers\.\d+\.email is a duplicate: each signer needs their own e-mail address",
        r"signers\.\d+\.fields\.\d+ must lie inside page \d+ \(.+ points\)",
        r"signers\.\d+\.fields\.\d+\.page must be at most \d+: the document has \d+ page\(s\)",
        # A request from a template: its roles decide each recipient's kind and step.
        r"signers\.\d+\.(recipientType|routingOrder) must be left out or be the role's: .+",
        r"signers\.\d+\.verification cannot be given to a cc: .+",
        r"signers\.\d+\.verification\.method must be left out or be the role's: .+",
        r"signers\.\d+\.verification\.code is required: the role .+ asks for an access code, which a template cannot hold .+",
        r"signingOrder cannot be sequential: the template’s roles have routing orders, which are the steps",
    ],
    "POST /templates": TEMPLATE_LAYOUT,
    "PATCH /templates/{id}": TEMPLATE_LAYOUT,
    "GET /templates/{id}/preview.png": [r"page must be at most \d+: .+ has \d+ page\(s\)", r"documentId must be one of the template’s documents: .+"],
    "PATCH /account/branding": BRANDING,
    "POST /webhooks": [PUBLIC_ADDRESS],
    "PATCH /webhooks/{id}": [PUBLIC_ADDRESS],
}

# The PDF upload takes raw bytes, as application/octet-stream does.
schemathesis.serializer.alias("application/pdf", "application/octet-stream")


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    if not isinstance(failure, RejectedPositiveData) or response.status_code != 400:
        return True
    rules = GENERAL_RULES + RULES_IN_WORDS.get(case.operation.label, [])
    try:
        details = response.json().get("details") or []
    except ValueError:
        return True
    stated_in_words = bool(details) and all(any(re.fullmatch(rule, detail) for rule in rules) for detail in details)
    return not stated_in_words
