"""One volume said once for a list of pairs split at semicolons: at the end of the last pair
("A1, A2 -> pool A1; B1, B2 -> pool B1 (20 uL each)"), as a piece of its own after them
("X H1 -> Y F1; X H6 -> Y F2; 20 uL each"), or with the first pair that the verbless pairs after
it follow ("Cherry-pick list (12 uL each): X A2 -> Y A1; X A4 -> Y A2"). Every pair of the list
that names no volume takes it; a pair that names its own keeps it."""

from __future__ import annotations

import re

from agents.task.planning._fragments import _volume_only
from agents.task.planning._frames import Frame, read
from agents.task.planning._reading import Read, _folded
from agents.task.planning.families import FAMILIES, Family

_FLAGS = re.IGNORECASE
_EACH = (
    r"(?:[\d.]+\s*(?:uL|mL))\s*"
    r"(?:each|per\s+(?:well|pair|pick|transfer)|apiece|from\s+each(?:\s+well)?)"
)
# "...; B1, B2 -> pool B1 (20 uL each)", "...; D11 to mid_plate A3 - 15 uL each, change tips
# every pick": the amount ends the last pair (a tip wish may follow it)
_EACH_AT_END = re.compile(
    rf"(?:\(\s*|,\s*|-\s*|(?<=\d)\s+){_EACH}\s*\)?"
    r"(?:\s*[,;-]\s*[^,;()]*\btips?\b[^,;()]*)?\W*$",
    _FLAGS,
)
# "Cherry-pick list (12 uL each; new tip per well): X A2 -> Y A1": said with the first pair
# ("Hit-pick (10 uL, new tip each): ...", "Hit-pick, 10 uL: ...", "Cherry-pick 10 uL, one tip
# for all: ...": in the lead before the colon)
_EACH_FIRST = re.compile(
    r"\d\s*(?:uL|mL)\s*(?:each|per\s+(?:pair|pick|transfer)|apiece)\b"
    r"|^[^():;]*(?:\(|,|\s)\s*[\d.]+\s*(?:uL|mL)\s*(?:[,;][^():;]*)?\)?\s*:",
    _FLAGS,
)


def shared_volume(read_in: Read) -> None:
    """Pairs of one sentence that name no volume take the volume said once for all of them."""
    _said_apart(read_in)
    for i, (said, fam) in enumerate(read_in):
        if said is None or not _moves(said, fam) or len(said.ents.volumes()) != 1:
            continue
        if _EACH_AT_END.search(said.text):
            _give(read_in, said, _before(read_in, i, said), i)
        elif _EACH_FIRST.search(said.text) or fam is not None:  # (or the verb's own volume:
            # "Transfer 30 uL of X A1 into Y A1-A3; X A2 into B1-B3": the verb and it elided)
            after = []
            for k in range(i + 1, len(read_in)):
                frame, family = read_in[k]
                if not _bare_pair(frame, family, said):
                    break
                after.append(k)
            if len(after) >= 1:
                _give(read_in, said, after, i)


def _said_apart(read_in: Read) -> None:
    """ "X H1 -> Y F1; X H6 -> Y F2; 20 uL each": the piece is folded into the last pair, which
    then says the volume at its end for every pair."""
    for i in range(len(read_in) - 1, 0, -1):
        piece, fam = read_in[i]
        if piece is None or fam is not None or not _volume_only(piece):
            continue
        last, last_fam = read_in[i - 1]
        if last is None or not _moves(last, last_fam) or last.ents.volumes():
            continue
        same = last.clause.sentence == piece.clause.sentence
        listed = _before(read_in, i - 1, last) if same else []
        if not same and _SHARED.search(piece.text):
            listed = _items_before(read_in, i - 1)  # "- X A1 -> Y A1\n- ...\n2 uL per spot"
        if not listed:
            continue
        if last_fam is None:
            last = read(last.clause, last.ents, "transfer")
        last.volume = piece.ents.volumes()[0]
        last.ents.tips = last.ents.tips or piece.ents.tips
        last.extra["folded"] = [*_folded(last), piece.clause]
        read_in[i - 1] = (last, _transfer())
        _give(read_in, last, listed, i - 1)
        del read_in[i]


_SHARED = re.compile(r"\b(?:each|per|all|apiece|every)\b", _FLAGS)


def _items_before(read_in: Read, i: int) -> list[int]:
    """The list items of pairs with no volume that end at ``i`` (a list of two or more)."""
    out = []
    for k in range(i, -1, -1):
        frame, family = read_in[k]
        if frame is None or not _moves(frame, family) or frame.ents.volumes():
            break
        if frame.clause.joined != "item":
            break
        out.append(k)
    return out[1:] if len(out) >= 2 else []


def _before(read_in: Read, i: int, last: Frame) -> list[int]:
    """The pairs of ``last``'s sentence right before it that name no volume."""
    out = []
    for k in range(i - 1, -1, -1):
        frame, family = read_in[k]
        if (
            frame is None
            or not _moves(frame, family)
            or frame.clause.sentence != last.clause.sentence
            or frame.ents.volumes()
        ):
            break
        out.append(k)
    return out


def _bare_pair(frame: Frame | None, family: Family | None, first: Frame) -> bool:
    """A verbless pair of places with no volume, said in ``first``'s sentence after it."""
    return (
        frame is not None
        and family is None
        and _moves(frame, family)
        and frame.clause.sentence == first.clause.sentence
        and frame.clause.joined == "semicolon"
        and not frame.ents.volumes()
    )


def _give(read_in: Read, said: Frame, others: list[int], at: int) -> None:
    """The pairs at ``others`` (and the one at ``at``) read as transfers of ``said``'s volume."""
    if not others:
        return
    volume = said.volume or said.ents.volumes()[0]
    for k in [*others, at]:
        frame, family = read_in[k]
        if frame is not None and family is None:  # "amp_plate A1 -> norm_out B1"
            frame = read(frame.clause, frame.ents, "transfer")
            read_in[k] = (frame, _transfer())
        if frame is not None and k != at:
            frame.volume = volume
            frame.ents.tips = frame.ents.tips or said.ents.tips  # said once with the volume


def _transfer() -> Family:
    return next(f for f in FAMILIES if f.name == "transfer")


def _moves(frame: Frame, family: Family | None) -> bool:
    """A transfer, or a verbless pair of places ("B1, B2 -> pool B1")."""
    if family is not None:
        return family.name == "transfer"
    return len(frame.places) >= 2 and bool(re.search(r"->|\binto\b", frame.text))
