"""Secrets are redacted and refused, whatever their shape."""

from __future__ import annotations

import pytest
from recallmem.secrets import find_secret, redact


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("key: sk-proj-AbCdEf1234567890XyZ0987", "sk-proj-AbCdEf1234567890XyZ0987"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123 ok", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
        ("AWS AKIAABCDEFGHIJKLMNOP", "AKIAABCDEFGHIJKLMNOP"),
        ("Authorization: Bearer abcdefghijklmnop.qrstuvwx", "abcdefghijklmnop.qrstuvwx"),
        ("db at postgres://admin:s3cret@db:5432/app", "s3cret"),
        ("my password is hunter22", "hunter22"),
        ("password: correct horse", "correct"),
        ("服务器 root 密码是 Tr0ub4dor&3，记住", "Tr0ub4dor&3"),
        ("API key 为 abcd-1234-efgh", "abcd-1234-efgh"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "MIIE"),
    ],
)
def test_secrets_are_found_and_redacted(text: str, secret: str) -> None:
    assert find_secret(text) is not None
    assert secret not in redact(text)
    assert "[REDACTED]" in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "The password is stored in 1Password",
        "my token is expired",
        "Prefers reports in Chinese",
        "Uses a password manager",
        "密码已经改过了",
    ],
)
def test_ordinary_text_is_not_a_secret(text: str) -> None:
    assert find_secret(text) is None
    assert redact(text) == text


def test_a_redaction_marker_counts_as_a_secret() -> None:
    assert find_secret("服务器 root 密码是 [REDACTED]") == "[REDACTED]"
