"""When to retry, and how long to wait first.

429 (rate limited) and 503 (a service the request needs failed) are the
answers the API gives when it did nothing: both are retried, waiting what
Retry-After says (seconds, or an HTTP date) or else an exponential backoff
with jitter, never past the call's deadline.
"""

from __future__ import annotations

import email.utils
import random
from typing import Callable, Mapping

RETRY_STATUSES = frozenset({429, 503})

# Backoff without Retry-After: BASE * 2**attempt, at most CAP, of which a
# random half ("equal jitter") so that clients rate limited together spread out.
BACKOFF_BASE = 0.5
BACKOFF_CAP = 8.0


def backoff(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry number attempt+1 (attempt counts from 0)."""
    full = min(BACKOFF_CAP, BACKOFF_BASE * float(2**attempt))
    return full / 2 + rand() * full / 2


def retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """The wait a Retry-After header asks for, in seconds (0 for a date in the
    past), or None when absent or unreadable. now is the Unix time, for dates."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)
