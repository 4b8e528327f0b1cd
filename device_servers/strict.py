"""Strict inputs at the server's boundary: what JSON says, nothing coerced.

Booleans only as JSON booleans (never "false", 0 or "off"), numbers only as JSON numbers (never
``true``, never "1"), strings without lone surrogates (they cannot be encoded as UTF-8, so an
answer echoing them could not be written at all), integers within what JSON carries exactly
(|n| <= 2**53) and nesting within a bound. Every violation is one structured
INVALID_ARGUMENT naming where it is; nothing is silently converted.
"""

from __future__ import annotations

import json
import math
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from device_servers.errors import Code, ValidationFailed, pydantic_detail

M = TypeVar("M", bound=BaseModel)

MAX_INT = 2**53  # the largest integer every JSON reader holds exactly
MAX_DEPTH = 32


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (for messages that echo input)."""
    if not _has_lone_surrogate(text):
        return text
    return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)


def clean(value: Any) -> Any:
    """``value`` (JSON-like) with lone surrogates replaced in every string and key."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


def _refuse(where: str, what: str, hint: str) -> ValidationFailed:
    return ValidationFailed(Code.INVALID_ARGUMENT, f"{where}: {what}", hint)


def check_json(value: Any, where: str = "arguments", depth: int = 0) -> None:
    """Refuse what JSON cannot carry faithfully (see the module docstring)."""
    if depth > MAX_DEPTH:
        raise _refuse(where, f"nested deeper than {MAX_DEPTH} levels", "flatten the value")
    if isinstance(value, str):
        if _has_lone_surrogate(value):
            raise _refuse(
                where,
                "a string with a lone surrogate (not valid Unicode)",
                "send text as valid UTF-8",
            )
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if abs(value) > MAX_INT:
            raise _refuse(where, f"integer beyond ±2^53 ({value:.3e})", "use a smaller number")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _refuse(where, "not a finite number", "send a finite JSON number")
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or _has_lone_surrogate(key):
                raise _refuse(where, "a key that is not valid text", "use plain text keys")
            check_json(item, f"{where}.{key}", depth + 1)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            check_json(item, f"{where}[{i}]", depth + 1)


def validate(model: type[M], data: Any, where: str, hint: str) -> M:
    """``data`` as ``model``, validated as the JSON it came from, in strict mode.

    JSON-mode strictness accepts exactly JSON's types: true/false for a boolean, a number for
    a number (an integer for an integer), a string for a string, an array for a tuple.
    """
    check_json(data, where)
    try:
        return model.model_validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        raise ValidationFailed(
            Code.INVALID_ARGUMENT, f"{where}: {pydantic_detail(exc)}", hint
        ) from exc
