"""How notebooks mark a step's end or a time in shorthand, read as the words they stand for:

- an arrow before the next step's verb is "then" ("50 uL dye -> plate_1 row A -> shake 2 min
  -> read at 450 nm": a transfer, a shake and a read, never a chain of places);
- a shake's settings in brackets are one setting ("on the shaker (600 rpm, 5 min)");
- a minute mark after a timed verb is minutes ("shake 5' at 300 rpm", "incubate 10'").
Pure text."""

from __future__ import annotations

import re

_STEP_VERBS = (
    r"shake|read|measure|incubate|mix|spin|seal|unseal|agitate|heat|cool|wait|hold|let|leave"
    r"|record|scan|move|take|add|dispense|transfer|pipett?e|discard|remove|aspirate|wash|top"
    r"|cover|centrifuge|run|thermocycle|dilute|pool|spot|stamp|quench|stop"
)
_ARROW_STEP = re.compile(
    rf"\s*->\s*(?=(?:then\s+)?(?:(?:{_STEP_VERBS})\b(?![_-])|OD\s*\d{{3}}\b|A\d{{3}}\b"
    rf"|\d+(?:\.\d+)?\s*(?:min|s|sec|h|hr)\w*\s+(?:{_STEP_VERBS})\b))",
    re.IGNORECASE,
)
# "(600 rpm, 5 min)", "(5 min, 600 rpm)": a shake's settings in brackets, one setting
_SETTINGS = re.compile(
    r"\(\s*(\d+\s*rpm)\s*[,;/]\s*(\d+(?:\.\d+)?\s*(?:min|s|sec|h|hr)\w*)\s*\)"
    r"|\(\s*(\d+(?:\.\d+)?\s*(?:min|s|sec|h|hr)\w*)\s*[,;/]\s*(\d+\s*rpm)\s*\)",
    re.IGNORECASE,
)
_TIMED_PRIME = re.compile(
    r"\b((?:shake|shaking|incubate|incubation|spin|wait|hold|agitate|heat|mix|for)\s+)"
    r"(\d+(?:\.\d+)?)\s*['′](?![\w'′\"])",
    re.IGNORECASE,
)


def step_marks(text: str) -> str:
    """``text`` with arrows between steps as "then" and minute marks after timed verbs as min."""
    if "->" in text:
        text = _ARROW_STEP.sub(", then ", text)
    if "rpm" in text.lower():
        text = _SETTINGS.sub(lambda m: f"at {m[1] or m[4]} for {m[2] or m[3]}", text)
    if "'" in text or "′" in text:
        text = _TIMED_PRIME.sub(lambda m: f"{m[1]}{m[2]} min", text)
    return text
