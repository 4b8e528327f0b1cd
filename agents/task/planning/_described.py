"""A liquid that says which wells, not what is moved: "every library in libs row A", "wash the
cells in X with HBSS", "add dye to the cells in X" - when the clause names another liquid, that
other one is what moves."""

from __future__ import annotations

import re

from agents.task.planning._lexicon import Mention

_FLAGS = re.IGNORECASE
_DESCRIBES = re.compile(
    r"\b(?:each|every|all(?:\s+of)?(?:\s+the)?|(?:wash|rinse|fix|stain|feed|treat|dose|spike|"
    r"to|onto|into|over)\s+(?:the\s+)?)\s*$",
    _FLAGS,
)
# "wash the cells in X", "to the cells in X": the wells that receive, never what is moved
_RECEIVES = re.compile(
    r"\b(?:wash|rinse|fix|stain|feed|treat|dose|spike|to|onto|into|over)\s+(?:the\s+)?$", _FLAGS
)
_TREATS = re.compile(r"\b(?:wash|rinse|fix|stain|feed|treat|dose|spike)\s+(?:the\s+)?$", _FLAGS)
_WITH = re.compile(r"[^,;]{0,40}?\bwith\b", _FLAGS)
_WELLS_OF = re.compile(r"(?:e?s)?\s+wells\b", _FLAGS)
_DESCRIBED = re.compile(r"(?:e?s)?\s+(?:wells?\s+)?(?:in|of|on)\s", _FLAGS)


def described_liquids(text: str, liquids: list[Mention]) -> tuple[list[Mention], list[Mention]]:
    """(the liquids the clause may move, []) when some liquids only describe wells and another
    is left to move; (every liquid, those describing wells) when no other is left."""
    described = [
        m
        for m in liquids
        if (_DESCRIBES.search(text[: m.start]) and _DESCRIBED.match(text[m.end :]))
        or _WELLS_OF.match(text[m.end :])  # "bring the amplicon wells (cols 1-2) up to ..."
        or (_TREATS.search(text[: m.start]) and _WITH.match(text[m.end :]))  # "wash X with Y"
    ]
    if described and len(described) < len(liquids):
        return [m for m in liquids if m not in described], []
    return list(liquids), described


def only_receive(text: str, described: list[Mention]) -> bool:
    """Every liquid named only says which wells receive ("add 20 uL stain to the cells in
    X"): none of them is what the clause moves."""
    return bool(described) and all(_RECEIVES.search(text[: m.start]) for m in described)
