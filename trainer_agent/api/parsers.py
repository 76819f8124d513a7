"""Strict JSON request parsing: RFC 8259 JSON only, bounded nesting, and every failure a 400 with a reason."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# Real request bodies nest about 6 levels (currentWorkout → exercises → muscles_utilized → share).
MAX_JSON_DEPTH = 32
TOO_DEEP = f"JSON nested deeper than {MAX_JSON_DEPTH} levels"


def check_json_value(value: Any) -> None:
    """Refuse what parses as JSON but cannot be stored or makes no sense; iterative, so no recursion limit.

    Refused: nesting deeper than MAX_JSON_DEPTH, U+0000 and lone surrogates in any string or key (PostgreSQL
    cannot store either: text refuses NUL, jsonb refuses both), and numbers too large for a float.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_string(item)
        elif isinstance(item, dict):
            if depth + 1 > MAX_JSON_DEPTH:
                raise ValueError(TOO_DEEP)
            for key in item:
                _check_string(key)
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            if depth + 1 > MAX_JSON_DEPTH:
                raise ValueError(TOO_DEEP)
            stack.extend((child, depth + 1) for child in item)


def _check_string(text: str) -> None:
    if "\x00" in text:
        raise ValueError("strings must not contain U+0000 (NUL)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            "strings must be valid Unicode (an unpaired surrogate escape such as \\ud83d)"
        ) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"the number {text[:20]}… is too large")
    return number


def loads_strict(text: str) -> Any:
    """Parse `text` as JSON. Raises ValueError with a readable reason for anything that is not plain JSON."""
    if text.startswith("\ufeff"):
        raise ValueError("the body starts with a byte order mark (BOM); send plain UTF-8")
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:  # thousands of levels: the C decoder gives up before we can count
        raise ValueError(TOO_DEEP) from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python's 4300-digit guard, worded for people
            raise ValueError("a number in the body has too many digits") from None
        raise
    check_json_value(value)
    return value


class StrictJSONParser(JSONParser):
    """DRF's JSON parser without NaN/Infinity, BOMs or unbounded nesting; errors say what is wrong."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        encoding = (parser_context or {}).get("encoding") or "utf-8"
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise ParseError(f"Invalid JSON body: it is not valid {encoding} text.") from exc
        try:
            return loads_strict(text)
        except ValueError as exc:
            raise ParseError(f"Invalid JSON body: {exc}.") from exc
