"""The secret detector: shapes, labels, checksums, and its measured recall and precision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from recallmem.errors import SecretRefusedError
from recallmem.secrets.checks import china_id_valid, luhn_valid, us_ssn_valid
from recallmem.secrets.detector import find_secret, redact, scan, screen_text

DATA = Path(__file__).resolve().parents[1] / "data" / "secrets"
RECALL_FLOOR = 95.0  # docs/benchmarks.md, "Secrets" (python -m bench secrets)
PRECISION_FLOOR = 95.0


def cases(name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = yaml.safe_load((DATA / f"{name}.yaml").read_text("utf-8"))
    return rows


@pytest.mark.parametrize("suffix", ["", "_heldout"], ids=["dev", "heldout"])
def test_recall_and_precision_on_the_labelled_chat_sets(suffix: str) -> None:
    secrets, benign = cases(f"secrets{suffix}"), cases(f"benign{suffix}")
    assert len(secrets) >= 35 and len(benign) >= 40  # the sets are all there
    missed = [s["text"] for s in secrets if s["secret"] in redact(s["text"])]
    flagged = [b["text"] for b in benign if scan(b["text"])]
    found = len(secrets) - len(missed)
    assert 100 * found / len(secrets) >= RECALL_FLOOR, missed
    assert 100 * found / (found + len(flagged)) >= PRECISION_FLOOR, flagged


def test_the_labelled_kinds_are_the_kinds_found() -> None:
    for case in cases("secrets"):
        assert case["kind"] in {f.kind for f in scan(case["text"])}, case["text"]


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
        "password: [REDACTED]",
        "set PASSWORD=${DB_PASSWORD}",
        "the card ending in 4242",
    ],
)
def test_ordinary_text_is_not_a_secret(text: str) -> None:
    assert find_secret(text) is None
    assert redact(text) == text


def test_only_extraction_counts_the_redaction_marker_as_a_secret() -> None:
    text = "服务器 root 密码是 [REDACTED]"
    assert find_secret(text) is None
    found = find_secret(text, count_redacted=True)
    assert found is not None and found.kind == "redacted secret"


def test_numbers_count_only_with_a_valid_checksum() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert [f.kind for f in scan("card 4111 1111 1111 1111")] == ["card number"]
    assert scan("card 4111 1111 1111 1112") == []
    assert scan("card 4111 11 1111 111111") == []  # not grouped like a card
    assert china_id_valid("11010519491231002X") and not china_id_valid("110105194912310021")
    assert not china_id_valid("110105194902301234")  # 30 February
    assert scan("身份证 110105194912310021") == []
    assert us_ssn_valid("123-45-6789")
    assert not any(us_ssn_valid(n) for n in ("000-12-3456", "666-12-3456", "912-34-5678",
                                             "123-00-4567", "123-45-0000"))  # fmt: skip
    assert scan("ref 666-12-3456") == []


def test_refusal_names_field_and_kind_never_the_secret() -> None:
    with pytest.raises(SecretRefusedError) as caught:
        screen_text("pw: Mango!77 and AKIAIOSFODNN7EXAMPLE", field="content", policy="refuse")
    error = caught.value
    assert error.field == "content" and error.kinds == ("cloud access key", "password")
    assert "Mango!77" not in str(error) and "AKIA" not in str(error)
    assert isinstance(error, ValueError)


def test_redact_policy_keeps_the_rest_and_clean_text_passes_untouched() -> None:
    assert screen_text("wifi pw: Mango!77, ask me", field="c", policy="redact") == (
        "wifi pw: [REDACTED], ask me"
    )
    assert screen_text("Likes tea", field="c", policy="refuse") == "Likes tea"


def test_long_pasted_text_is_scanned_in_linear_time() -> None:
    # An unbounded repetition in a rule made this input take over 30 s.
    import time

    started = time.perf_counter()
    scan("-".join("ab" for _ in range(20000)))
    assert time.perf_counter() - started < 5.0
