"""Neutral types: usage buckets, error classification, retry-after parsing, token estimate."""

from __future__ import annotations

import pickle

import pytest

from tests.support.llm_fakes import sample_llm_request
from trainer_agent.llm.types import (
    LLMError,
    Usage,
    error_kind_for_status,
    retry_after_seconds,
    total_characters,
)


def test_usage_event_tokens_and_sum() -> None:
    """as_event_tokens names the buckets of DESIGN.md; total counts each bucket once; usages add up."""
    usage = Usage(input_tokens=10, output_tokens=5, cache_read_tokens=100, cache_write_tokens=20)
    assert usage.as_event_tokens() == {
        "prompt": 10,
        "completion": 5,
        "cached": 100,
        "cache_write": 20,
        "total": 135,
    }
    assert usage + usage == Usage(20, 10, 200, 40)


@pytest.mark.parametrize(
    ("status", "error_type", "kind"),
    [
        (529, None, "overloaded"),
        (500, "overloaded_error", "overloaded"),
        (429, None, "rate_limited"),
        (408, None, "timeout"),
        (401, None, "auth"),
        (403, None, "auth"),
        (400, None, "bad_request"),
        (422, None, "bad_request"),
        (500, None, "server"),
        (504, None, "server"),
    ],
)
def test_error_kind_for_status(status: int, error_type: str | None, kind: str) -> None:
    """HTTP statuses map to the same LLMError kinds for every provider."""
    assert error_kind_for_status(status, error_type=error_type) == kind


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "12"}, 12.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds(headers: dict[str, str], seconds: float | None) -> None:
    """retry-after-ms, retry-after seconds and HTTP dates (a past date means 0) are understood."""
    assert retry_after_seconds(headers) == seconds


def test_llm_error_rejects_unknown_kinds_and_survives_pickling() -> None:
    """Kinds are a closed set, and an LLMError keeps its fields across pickling (process pools)."""
    with pytest.raises(ValueError, match="Unknown LLMError kind"):
        LLMError("boom", "x")  # type: ignore[arg-type]
    error = pickle.loads(pickle.dumps(LLMError("rate_limited", "slow", status_code=429, retry_after=2.0)))
    assert error.as_event_data() == {
        "kind": "rate_limited",
        "message": "slow",
        "status_code": 429,
        "retry_after": 2.0,
    }


def test_estimated_tokens_is_characters_over_four() -> None:
    """The pre-call estimate of docs/contracts.md §8.4 (token estimate) is every character of the request divided by 4."""
    request = sample_llm_request()
    assert total_characters(request) > len(request.system_prompt) + len(request.user_data_xml)
    assert request.estimated_tokens() == total_characters(request) // 4
