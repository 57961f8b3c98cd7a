"""Errors raised by privsearch: one class per status code of the C++ library.

Every error carries ``code`` (the status code name, e.g. ``"INVALID_ARGUMENT"``) and, when the
provider refused a request, ``provider_code`` (its typed error code, e.g. ``"BUDGET_EXHAUSTED"``;
``None`` otherwise).
"""

import re
from typing import Optional


class Error(Exception):
    """Base class of every privsearch error."""

    code: str = "UNKNOWN"

    def __init__(self, message: str, provider_code: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.provider_code = provider_code


class InvalidArgumentError(Error, ValueError):
    """Something the caller passed can never work (wrong dimension, NaN, bad dtype...)."""

    code = "INVALID_ARGUMENT"


class OutOfRangeError(Error, ValueError):
    code = "OUT_OF_RANGE"


class FailedPreconditionError(Error):
    """The objects are fine but do not fit together (another index version, parameters...)."""

    code = "FAILED_PRECONDITION"


class DataLossError(Error):
    """Malformed, truncated or changed bytes (a damaged index file, a tampered message)."""

    code = "DATA_LOSS"


class ResourceExhaustedError(Error):
    """A named limit was hit (request budget, rate limit, provider overloaded)."""

    code = "RESOURCE_EXHAUSTED"


class UnavailableError(Error, ConnectionError):
    """The provider (or its state store) cannot be reached."""

    code = "UNAVAILABLE"


class NotFoundError(Error, LookupError):
    code = "NOT_FOUND"


class InternalError(Error):
    code = "INTERNAL"


class UnauthenticatedError(Error):
    """A signature or credential does not verify (e.g. an index not signed by the pinned key)."""
    code = "UNAUTHENTICATED"


_BY_CODE = {cls.code: cls for cls in (InvalidArgumentError, OutOfRangeError,
                                      FailedPreconditionError, DataLossError,
                                      ResourceExhaustedError, UnavailableError, NotFoundError,
                                      InternalError, UnauthenticatedError)}
# "provider refused the request: BUDGET_EXHAUSTED: ..." (client/rerank_session.cpp)
_PROVIDER_CODE = re.compile(r"provider refused [^:]*: ([A-Z_]+): ")


def from_status(code: str, message: str) -> Error:
    """The exception for a C++ status (used by the extension module)."""
    match = _PROVIDER_CODE.search(message)
    cls = _BY_CODE.get(code, Error)
    return cls(message, match.group(1) if match else None)
