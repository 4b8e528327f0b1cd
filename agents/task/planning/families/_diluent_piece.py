"""A piece said after a normalisation that only names what to dilute with: "... into norm_out
A1-C1. Diluent: low-TE.", "...; use EB buffer as diluent", "Dilute with water.", "top up with
EB buffer", "...; 20 uL final; EB buffer" (the name alone). The piece
names one liquid and no place, volume or level; read with the normalisation it completes."""

from __future__ import annotations

import re

from agents.task.planning._frames import Frame
from agents.task.planning.families import _concentrations as conc

# the words such a piece may hold beside its liquid
_WORDS = frozenset(
    re.split(
        r"\s+",
        "diluent diluents dilute diluted diluting dilution dilutions use using with w/ as the is in"
        " please should be for all of them each sample samples buffer top make up fill bring"
        " rest remainder balance : - = . ; ,",
    )
)
# ... and one of them must say the liquid is the diluent
_ROLE = re.compile(r"\b(?:diluents?|dilut\w*|with|using|use)\b|w/", re.IGNORECASE)
_LIST_LABEL = re.compile(r"^(?:conc\w*|qubit|nanodrop|quant\w*|values?|readings?)\b", re.IGNORECASE)
_BARE = re.compile(r"[\s:;,.=-]*")  # "...; EB buffer": the name alone


def diluent_piece(frame: Frame, head: Frame) -> bool:
    """Whether ``frame`` only names the liquid the normalisation ``head`` dilutes with."""
    ents = frame.ents
    names = {m.name for m in ents.liquids}
    if len(names) != 1 or ents.wellsets or ents.labware or ents.quantities:
        return False
    if conc.said(frame.text) or names <= {m.name for m in head.ents.liquids}:
        return False  # a level, or the samples named again
    text = ents.text
    for m in sorted(ents.liquids, key=lambda m: m.start, reverse=True):
        text = f"{text[: m.start]} {text[m.end :]}"
    label = frame.clause.label or ""
    if label == (head.clause.label or "") or _LIST_LABEL.match(label):
        label = ""  # "Normalise: A1 25 ng/uL, ... to 5 ng/uL; diluent EB": the head's own label
        # ("Qubit: A1 10, B1 8 ng/uL. Diluent RSB.": the list's label, carried on)
    if not label and _BARE.fullmatch(text):
        return True  # "normalise to 2 nM: A1 8 nM, B1 4 nM; 20 uL final; EB buffer"
    words = re.sub(r"([:=;,.])", r" \1 ", f"{label} {text}").lower().split()
    return set(words) <= _WORDS and bool(_ROLE.search(f"{label} {text}"))
