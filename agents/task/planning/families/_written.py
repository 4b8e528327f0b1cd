"""The liquid a transfer clause names in its head even when the lab does not know it
("add 50 uL of ethanol to A1"): the words before its places, less the verb, the amounts and
the words that only say how."""

from __future__ import annotations

import re

from agents.task.planning._clauses import ACTION_VERBS
from agents.task.planning._frames import Frame
from agents.task.planning.families._pairing import start

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
    head = frame.text[:cut]
    for q in frame.ents.quantities:
        head = head.replace(q.text, " ")
    found = re.findall(r"[A-Za-z][\w-]*", head)
    # the verb opens the clause; "primers 2 uL into row A" opens with what it moves
    skip = 1 if found and _VERB.fullmatch(found[0]) else 0
    words = [w for w in found[skip:] if w.lower() not in _STOP and not _HOW.fullmatch(w)]
    return " ".join(words) or None
