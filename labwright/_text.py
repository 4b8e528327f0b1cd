"""Text shown to people on one line (no third-party imports: servers use it too)."""

from __future__ import annotations


def one_line(text: str) -> str:
    """``text`` safe to show on one terminal line: control characters (line breaks, escape
    sequences) and lone surrogates as escapes."""
    return "".join(
        ch
        if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF
        else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
        for ch in text
    )


INTERNAL_ERROR = 70  # EX_SOFTWARE: a bug of ours, never the user's input


def not_utf8(argv: list[str]) -> str | None:
    """The first argument that was not valid UTF-8 (Python keeps such bytes as surrogates)."""
    for i, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return f"argument {i} is not valid UTF-8 text"
    return None


def bug(exc: BaseException) -> str:
    """What a command says of an exception that escaped it (exit :data:`INTERNAL_ERROR`)."""
    return (
        f"{one_line(f'{type(exc).__name__}: {exc}')} "
        "(a bug in Labwright: LABWRIGHT_DEBUG=1 shows where)"
    )
