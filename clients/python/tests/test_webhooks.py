"""Webhook verification, against the Standard Webhooks specification's published vector."""

from __future__ import annotations

import unittest

from tokenvault_client.webhooks import WebhookVerificationError, parse_secret, sign, verify

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TS = 1614265330
BODY = b'{"test": 2432232314}'
SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def headers(sig: str, ts: str = str(TS)) -> dict[str, str]:
    return {"Webhook-Id": ID, "Webhook-Timestamp": ts, "Webhook-Signature": sig}


class WebhooksTest(unittest.TestCase):
    def test_sign_matches_the_vector(self) -> None:
        self.assertEqual(sign(SECRET, ID, TS, BODY), SIG)

    def test_verify(self) -> None:
        other = sign("whsec_" + "A" * 32, ID, TS, BODY)
        cases = [
            ("vector", headers(SIG), BODY, TS, None),
            ("several signatures, the good one last", headers(f"{other} v2,abc {SIG}"), BODY, TS, None),
            ("4 min late", headers(SIG), BODY, TS + 240, None),
            ("6 min late", headers(SIG), BODY, TS + 360, "too_old"),
            ("6 min early", headers(SIG), BODY, TS - 360, "too_new"),
            ("body changed", headers(SIG), b'{"test": 2432232315}', TS, "no_signature"),
            ("another secret's signature only", headers(other), BODY, TS, "no_signature"),
            ("v2 only", headers(SIG.replace("v1", "v2", 1)), BODY, TS, "no_signature"),
            ("no signature", headers(""), BODY, TS, "missing_headers"),
            ("bad timestamp", headers(SIG, "yesterday"), BODY, TS, "timestamp"),
        ]
        for name, hdrs, body, now, want in cases:
            with self.subTest(name):
                if want is None:
                    verify(SECRET, hdrs, body, now=now)
                    continue
                with self.assertRaises(WebhookVerificationError) as cm:
                    verify(SECRET, hdrs, body, now=now)
                self.assertEqual(cm.exception.reason, want)
        with self.assertRaises(WebhookVerificationError) as old:
            verify(SECRET, headers(SIG), BODY)  # the clock: the vector is years old
        self.assertEqual(old.exception.reason, "too_old")

    def test_malformed_secrets_are_refused(self) -> None:
        for secret in ["", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_" + "A" * 28, "whsec_" + "A" * 88, "whsec_not*base64"]:
            with self.subTest(secret=secret), self.assertRaises(WebhookVerificationError) as cm:
                parse_secret(secret)
            self.assertEqual(cm.exception.reason, "secret")
            if len(secret) > len("whsec_"):
                self.assertNotIn(secret, str(cm.exception), "the message never quotes the secret")


if __name__ == "__main__":
    unittest.main()
