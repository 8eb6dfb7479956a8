"""HTTP integrations: exactly-once requests for ASGI apps (:mod:`mintid.http.asgi`),
WSGI apps (:mod:`mintid.http.wsgi`) and a grant endpoint, over :mod:`mintid.store`.

The framework-neutral :class:`HttpIdempotency` holds the rules of
``tests/http/README.md``: which requests are covered, the key (an
``Idempotency-Key`` or a signed request ID), the body fingerprint, running the
handler once and the ``application/problem+json`` refusals from the core.
"""  # noqa: D205

from mintid.http._answer import HttpAnswer, from_stored, problem_answer, status_answer, to_stored
from mintid.http._core import (
    DEFAULT_BODY_LIMIT,
    DEFAULT_METHODS,
    DEFAULT_STORED_HEADERS,
    IDEMPOTENCY_KEY_HEADER,
    REQUEST_ID_HEADER,
    Admitted,
    AsyncRunOnceStore,
    AsyncTransactionStore,
    GrantRoute,
    HttpIdempotency,
    HttpRequestView,
    RunOnceStore,
    TransactionStore,
    answer_of,
    fingerprint_body,
    fingerprint_request,
    is_json_content_type,
    transaction,
)
from mintid.http._grant import grant_answer
from mintid.http._rules import (
    DEFAULT_GRANT_TTL_MILLIS,
    GRANT_CONTENT_TYPE,
    EnvelopeResponse,
    StoredEnvelope,
    decode_envelope,
    default_kind,
    encode_envelope,
    grant_document,
    problem_document,
    status_document,
)

__all__ = [
    "DEFAULT_BODY_LIMIT",
    "DEFAULT_GRANT_TTL_MILLIS",
    "DEFAULT_METHODS",
    "DEFAULT_STORED_HEADERS",
    "GRANT_CONTENT_TYPE",
    "IDEMPOTENCY_KEY_HEADER",
    "REQUEST_ID_HEADER",
    "Admitted",
    "AsyncRunOnceStore",
    "AsyncTransactionStore",
    "EnvelopeResponse",
    "GrantRoute",
    "HttpAnswer",
    "HttpIdempotency",
    "HttpRequestView",
    "RunOnceStore",
    "StoredEnvelope",
    "TransactionStore",
    "answer_of",
    "decode_envelope",
    "default_kind",
    "encode_envelope",
    "fingerprint_body",
    "fingerprint_request",
    "from_stored",
    "grant_answer",
    "grant_document",
    "is_json_content_type",
    "problem_answer",
    "problem_document",
    "status_answer",
    "status_document",
    "to_stored",
    "transaction",
]
