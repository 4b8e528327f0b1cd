"""The liquid a transfer clause names in its head even when the lab does not know it
("add 50 uL of ethanol to A1"): the words before its places, less the verb, the amounts and
the words that only say how."""

from __future__ import annotations

import re

from agents.task.planning._clauses import ACTION_VERBS
from agents.task.planning._frames import Frame
from agents.task.planning.families._pairing import end, start

_FLAGS = re.IGNORECASE
_STOP_TEXT = """
    of the a an some fresh more additional another each per well wells every all into to in
    from with and then please new old spent same it them this that these those ul ml
    microliters microlitres on onto at for add adding volume volumes amount amounts respectively
    following follows below listed as
"""
_STOP = frozenset(_STOP_TEXT.split())
# "add 50 uL slowly to B1", "just 50 uL": how, not what
_HOW = re.compile(
    r"slowly|gently|carefully|quickly|evenly|equally|dropwise|directly|immediately|just|only|"
    r"again|too|also|instead",
    re.IGNORECASE,
)


_VERB = re.compile(
    rf"(?:{ACTION_VERBS}|deliver|dose|spike|coat|charge|apportion|give|inject|supply|provide|"
    r"introduce|feed|block|squirt|pop|dump|dispence|pipet|want|need|get)\w*",
    _FLAGS,
)


def written_liquid(frame: Frame) -> str | None:
    """A liquid named in the clause's head that the lab does not know ('ethanol')."""
    said = frame.extra.get("described")  # "stain to the cells in X": not "cells"
    described = said if isinstance(said, list) else []
    cut = min(
        [start(pl) for _, pl in frame.places] + [m.start for m in described] + [len(frame.text)]
    )
    words = _words(frame, frame.text[:cut])
    vols = [q.start for q in frame.ents.quantities if q.kind == "volume"]
    before = [end(pl) for _, pl in frame.places if end(pl) <= vols[0]] if vols else []
    if not words and before and _ITEM_LIQUID.fullmatch(frame.text[max(before) : vols[0]]):
        # "row C water 20 uL", "Add row C with DMSO 10 uL": a plate map item, its liquid
        # between its wells and its volume (a few words, nothing else)
        words = _words(frame, frame.text[max(before) : vols[0]])
    return " ".join(words) or None


_ITEM_LIQUID = re.compile(r"\s*(?:with\s+)?[A-Za-z][\w%+.-]*(?:\s+[A-Za-z][\w%+.-]*){0,2}\s*:?\s*")


def _words(frame: Frame, head: str) -> list[str]:
    """The words of ``head`` that may name a liquid: less amounts, the verb, how-words."""
    for q in frame.ents.quantities:
        head = head.replace(q.text, " ")
    found = re.findall(r"[A-Za-z][\w-]*", head)
    # the verb opens the clause; "primers 2 uL into row A" opens with what it moves
    skip = 1 if found and _VERB.fullmatch(found[0]) else 0
    return [w for w in found[skip:] if w.lower() not in _STOP and not _HOW.fullmatch(w)]
