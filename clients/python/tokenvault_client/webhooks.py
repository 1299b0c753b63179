"""Verifying the webhook deliveries Token Vault sends, the Standard Webhooks way.

Each delivery carries webhook-id (the event's id: drop duplicates by it, as
delivery is at least once), webhook-timestamp (Unix seconds) and
webhook-signature: "v1,<base64 HMAC-SHA256>" of "<id>.<timestamp>.<body>"
under the webhook's secret ("whsec_" and the base64 of its key), several
space-separated during the overlap after the secret's rotation. This is what
the Go package webhooks does, for receivers written in Python:

    from tokenvault_client.webhooks import verify, WebhookVerificationError

    try:
        verify(os.environ["TOKENVAULT_WEBHOOK_SECRET"], request.headers, request.get_data())
    except WebhookVerificationError:
        return "", 400
    event = json.loads(request.get_data())
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from typing import Mapping

from .errors import TokenVaultError

__all__ = ["TOLERANCE_SECONDS", "WebhookVerificationError", "parse_secret", "sign", "verify"]

# How far a delivery's webhook-timestamp may be from the receiver's clock,
# either way, before it is refused as a replay (or a clock gone wrong).
TOLERANCE_SECONDS = 300

SECRET_PREFIX = "whsec_"
MIN_SECRET_BYTES, MAX_SECRET_BYTES = 24, 64


class WebhookVerificationError(TokenVaultError):
    """A delivery that does not verify. reason is one of "secret" (the secret
    is malformed), "missing_headers", "timestamp" (not Unix seconds),
    "too_old", "too_new", "no_signature" (none matches)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def parse_secret(secret: str) -> bytes:
    """The key of a secret's text form ("whsec_" and the standard base64 of 24
    to 64 bytes). Any other form raises WebhookVerificationError("secret"),
    never a key: a receiver whose secret variable is unset must not verify
    against an empty key."""
    if not isinstance(secret, str) or not secret.startswith(SECRET_PREFIX):
        raise WebhookVerificationError("secret", 'a webhook secret is "whsec_" and the base64 of 24 to 64 bytes')
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise WebhookVerificationError("secret", 'a webhook secret is "whsec_" and the base64 of 24 to 64 bytes')
    return key


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The webhook-signature entry ("v1,<base64>") of a delivery: for tests of
    a receiver. Raises WebhookVerificationError("secret") for a malformed secret."""
    return "v1," + base64.b64encode(_mac(parse_secret(secret), webhook_id, timestamp, body)).decode("ascii")


def verify(secret: str, headers: Mapping[str, str], body: bytes, *, now: float | None = None) -> None:
    """Returns when one of the v1 signatures in webhook-signature signs body
    under secret and webhook-timestamp is within TOLERANCE_SECONDS of now (the
    clock, unless given); raises WebhookVerificationError otherwise. headers
    are the request's (names in any case); body its exact bytes, read before
    any JSON decoding."""
    key = parse_secret(secret)
    lower = {k.lower(): v for k, v in headers.items()}
    webhook_id = lower.get("webhook-id", "")
    stamp = lower.get("webhook-timestamp", "")
    signatures = lower.get("webhook-signature", "")
    if not webhook_id or not stamp or not signatures:
        raise WebhookVerificationError("missing_headers", "webhook-id, webhook-timestamp or webhook-signature is missing")
    try:
        unix = int(stamp, 10)
    except ValueError:
        raise WebhookVerificationError("timestamp", "webhook-timestamp is not Unix seconds") from None
    clock = time.time() if now is None else now
    if clock - unix > TOLERANCE_SECONDS:
        raise WebhookVerificationError("too_old", "webhook-timestamp is too old")
    if unix - clock > TOLERANCE_SECONDS:
        raise WebhookVerificationError("too_new", "webhook-timestamp is in the future")
    want = _mac(key, webhook_id, unix, body)
    found = False
    for entry in signatures.split():
        version, _, sig = entry.partition(",")
        if version != "v1":
            continue
        try:
            got = base64.b64decode(sig, validate=True)
        except (binascii.Error, ValueError):
            continue
        # Every entry is compared, so the time taken does not tell which matched.
        if hmac.compare_digest(got, want):
            found = True
    if not found:
        raise WebhookVerificationError("no_signature", "no signature matches")


def _mac(key: bytes, webhook_id: str, unix: int, body: bytes) -> bytes:
    return hmac.new(key, f"{webhook_id}.{unix}.".encode("utf-8") + body, hashlib.sha256).digest()
