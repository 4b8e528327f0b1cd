"""What a sentence says before its command, moved to where the command reads it:

- a dilution's diluent: "Using the standard diluent, make a 2-fold series of X in A1-H1" is
  "make a 2-fold series of X in A1-H1 using the standard diluent" (only a lead-in naming a
  liquid, never a head, tips or a pipette, before a dilution's sentence);
- the plate named before: "On the same plate, put 200 uL X in A3 ..." is "put 200 uL X in A3
  ...", whose wells are on the plate the request last named.
Pure text."""

from __future__ import annotations

import re

from agents.task.planning._vocabulary import ACTION_VERBS

_FLAGS = re.IGNORECASE
_LEAD = re.compile(
    r"(?:(?<=^)|(?<=[.;\n]\s)|(?<=\n))(?P<pad>\s*)(?:using|with)\s+(?P<what>[^,.;:\n]{2,40}?)\s*,\s*"
    r"(?P<rest>(?:make|prepare|set\s+up|do|run|perform|create|serially|dilute|please)\b"
    r"(?:[^.;\n]|\.(?=\d))*)",
    _FLAGS,
)
_TOOL = re.compile(r"\b(?:channels?|head|tips?|pipett\w*|multi\w*|robot|arm|p\d+)\b", _FLAGS)
_DILUTION = re.compile(
    r"dilut|\bfold\b|-fold|\bserial|\bcurves?\b|\bstandards?\b|\b1\s*:\s*\d", re.I
)


# "with the 8-channel stamp samples to dest_plate": the tool said, then the command with no
# comma between (else the whole sentence reads as a setting and its command is lost)
_TOOL_THEN_VERB = re.compile(
    r"(?:(?<=^)|(?<=[.;\n]\s)|(?<=\n))(?P<lead>\s*(?:using|with)\s+(?:the\s+|an?\s+)?"
    r"(?:[\w-]+\s+){0,2}?[\w-]*(?:channel|head|multichannel|pipett\w*)s?)\s+"
    rf"(?!(?:head|pipett?e?)s?\b)(?=(?:{ACTION_VERBS})\b)",  # ("the 8 channel pipette, ...")
    _FLAGS,
)


_SAME_PLATE = re.compile(
    r"(?:(?<=^)|(?<=[.;\n]\s)|(?<=\n))(?:on|in|onto|into|using|for)\s+(?:the\s+)?(?:same|that)\s+plate"
    r"\s*,\s*(?=[a-z])",
    _FLAGS,
)


def using_after(text: str) -> str:
    """``text`` with a diluent said before its dilution's sentence moved to that sentence's end,
    and "On the same plate," before a command dropped (its wells are on that plate)."""
    if "plate" in text:
        text = _SAME_PLATE.sub("", text)
    if not re.search(r"\b(?:using|with)\b", text, _FLAGS):
        return text
    text = _TOOL_THEN_VERB.sub(lambda m: f"{m['lead']}, ", text)
    return _LEAD.sub(
        lambda m: (
            m.group(0)
            if _TOOL.search(m["what"]) or not _DILUTION.search(m["rest"])
            else f"{m['pad']}{m['rest'].rstrip()} using {m['what']}"
        ),
        text,
    )
