"""How much a serial dilution moves: each well's final volume V and each step's transfer t,
from what the request says - a final volume ("100 uL final"), the top standard's volume ("200
uL top standard": V * k / (k - 1)), the step ("20 uL transfers", "5 uL carried each step",
"100 uL into 100 uL DMSO"), a volume per well, or the diluent already in the wells."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from itertools import pairwise

from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask
from agents.task.planning._quantities import Quantity, fmt

_FLAGS = re.IGNORECASE
_STEP_VOLUME = re.compile(
    r"\b(?:transfer(?:ring)?|move|carry(?:ing)?|take|taking|pass(?:ing)?)\s*$", _FLAGS
)

# "5 uL carried each step", "20 uL transfers", "10 uL per step": what each step carries
_STEP_AFTER = re.compile(
    r"\s*(?:(?:is\s+|are\s+)?(?:carried|transferred|moved|passed)\b|transfers?\b"
    r"|(?:into|in)\s+(?:each\s+)?[\d.]+\s*(?:u[lL]|µ[lL])\b"  # "100 uL into 100 uL DMSO"
    r"|(?:per|each|every)\s+(?:step|transfer)\b)",
    _FLAGS,
)


_EACH = re.compile(r"\s*(?:each|apiece|/\s*well|per\s+(?:well|standard|std|point))\b", _FLAGS)
_TOP = re.compile(
    r"\s*(?:of\s+(?:the\s+)?[\w-]+\s+)?(?:as\s+(?:the\s+)?)?(?:top|highest|first|undiluted)\s+"
    r"(?:standard|well|point|concentration|std)\b|\s*top\s*(?=[,;.)]|$)"  # "250 uL top, ..."
    r"|\s*(?:(?:of\s+)?[\w-]+\s+)?(?:in|into)\s+(?:the\s+)?"
    r"(?:top|first)\s+(?:well|standard|point)\b",
    _FLAGS,
)
_TOP_BEFORE = re.compile(
    r"\b(?:top|highest|first)\s+(?:standard|well|point|std)\s*"
    # "top standard in A1 (200 uL)", "the top standard in A1 of P (200 uL of X)"
    r"(?:(?:in|into|at|=|:)\s*(?:well\s+)?[A-Pa-p]\d{1,2}\s*(?:(?:of|on|in)\s+(?:the\s+)?[\w-]+\s*)?)?"
    r"(?:gets|holds|has|with|of|:|=|\()?\s*$",
    _FLAGS,
)
# "200 uL standard in A1", "S1 = 200 uL neat X": the stock's own volume, the top standard's
_STOCK_BEFORE = re.compile(r"\s*(?:of\s+)?(?:the\s+)?(?:(?:neat|undiluted|pure|stock)\s+)?", _FLAGS)
_SPREAD_AFTER = re.compile(
    r"^[^,;]*?(?:\b(?:each|every|all|per|wells)\b|/\s*well|[A-Pa-p]\d{1,2}\s*(?:-|:|to|through)\s*[A-Pa-p]\d)",
    _FLAGS,
)
# "2x dilutions with 100 uL sample buffer": the diluent each well after the first gets
_FILL_BEFORE = re.compile(r"\s*(?:of\s+)?(?:the\s+)?$", _FLAGS)


# "20 uL dye into 180 uL buffer", "100 uL from A1 into 0.1 mL DMSO", "10 uL gBlock std 1e7
# copies/uL into 90 uL TE": a step and the diluent it lands in, never a level ("into 200 uL
# final") or a place
_INTO_BETWEEN = re.compile(
    r"^\s+(?:(?:of\s+)?[\w«»/.%+-]+\s+){0,6}?(?:from\s+\w+\s+[A-Pa-p]\d{1,2}\s+)?"
    r"in(?:to)?\s+(?:(?:each|the)\s+)?$",
    _FLAGS,
)
STEP_INTO = re.compile(
    r"[\d.]+\s*[um]l\s[^,;]*?\bin(?:to)?\s+(?:the\s+)?[\d.]+\s*[um]l\b(?!\s*(?:final|total))",
    _FLAGS,
)
_LEVEL_AFTER = re.compile(r"\s*(?:final|total|(?:per|each|in\s+each)\s+well|wells?\b)", _FLAGS)


# "20 uL dye into 200 uL final": the step and the level it makes, Y - X of diluent
INTO_LEVEL = re.compile(
    r"[\d.]+\s*[um]l\s[^,;]*?\bin(?:to)?\s+(?:a\s+|the\s+)?[\d.]+\s*[um]l\s+(?:final|total)\b",
    _FLAGS,
)


def says_step(text: str) -> bool:
    """ "20 uL into 180 uL", "20 uL dye into 200 uL final": the text says a dilution's step."""
    return bool(STEP_INTO.search(text) or INTO_LEVEL.search(text))


def into_pair(frame: Frame) -> tuple[Quantity, Quantity] | None:
    """The step and the diluent of "X uL into Y uL" (or of "X uL into Y uL final": Y - X),
    when the clause says it that way."""
    levels = [q for q in (frame.final, frame.total) if q is not None]
    vols = sorted([*frame.volumes, *levels], key=lambda q: q.start)
    pairs = [(a, b) for a, b in pairwise(vols) if _INTO_BETWEEN.match(frame.text[a.end : b.start])]
    plain = [(a, b) for a, b in pairs if not _LEVEL_AFTER.match(frame.text[b.end :])]
    if plain:
        return plain[0]
    level = [
        (a, replace(b, value=round(b.value - a.value, 4)))
        for a, b in pairs
        if re.match(r"\s*(?:final|total)\b", frame.text[b.end :], _FLAGS) and b.value > a.value
    ]
    return level[0] if level else None


def fold_of(frame: Frame, said: Callable[[Frame], float]) -> float:
    """The fold as said, or as "20 uL into 180 uL" gives it (10-fold); asked when they differ."""
    pair = into_pair(frame)
    if pair is None:
        return said(frame)
    k = round((pair[0].value + pair[1].value) / pair[0].value, 4)
    if frame.ents.fold is not None and abs(said(frame) - k) > 1e-3:
        raise Ask(
            f"{fmt(pair[0].value, 'uL')} into {fmt(pair[1].value, 'uL')} is a {k:g}-fold step, "
            f"but the request says {said(frame):g}-fold: which is right?",
            ["fold"],
            [f"{k:g}-fold", f"{said(frame):g}-fold"],
        )
    return k


# "into the 180 uL of buffer in B1-H1", "180 uL PBS already in B2:B8", "prefilled with 90 uL":
# the request says the wells after the first already hold the diluent
_HELD_SAID = re.compile(
    r"\binto\s+the\s+[\d.]+\s*[um]l\b|[\d.]+\s*[um]l\s+(?:of\s+)?(?:[\w-]+\s+){0,3}?already\s+in\b"
    r"|\bpre-?filled\s+with\s+[\d.]+",
    _FLAGS,
)


def _diluent_fill(frame: Frame, diluent: str | None) -> Quantity | None:
    """The volume said right before the diluent's name ("with 100 uL sample buffer"): what
    each well after the first gets, the final volume V."""
    names = [m for m in frame.ents.liquids if m.name == diluent]
    return next(
        (
            q
            for q in frame.volumes
            for m in names
            if m.start >= q.end and _FILL_BEFORE.fullmatch(frame.ents.text[q.end : m.start])
        ),
        None,
    )


def _stock_amount(frame: Frame, stock: str | None) -> Quantity | None:
    """The volume said right before the stock's name, into one well ("200 uL standard in A1,
    then 2-fold ...", "S1 = 200 uL neat X"): the top standard's, V * k / (k - 1)."""
    text = frame.ents.text
    return next(
        (
            q
            for q in frame.volumes
            for m in frame.ents.liquids
            if m.name == stock
            and m.start >= q.end
            and _STOCK_BEFORE.fullmatch(text[q.end : m.start])
            and not _SPREAD_AFTER.match(text[m.end :])
        ),
        None,
    )


def amounts(
    frame: Frame,
    k: float,
    held: float | None,
    liquids: tuple[str | None, str | None] = (None, None),
) -> tuple[float, float, bool]:
    """(V, t, whether the step was said) for a k-fold dilution; ``held``: the diluent each
    well after the first already holds (None: none); ``liquids``: the stock and the diluent."""
    stock, diluent = liquids
    if held is None and _HELD_SAID.search(frame.text):
        raise Ask(
            "The request says the wells after the first already hold the diluent, but the lab "
            "has them empty (or holding something else): which is right?",
            ["lab_state"],
            ["fill them with the diluent first", "the lab state is out of date"],
        )
    pair = into_pair(frame)
    if pair is not None and all(pair[1] is not q for q in (*frame.volumes, frame.final)):
        # "20 uL into 200 uL final": each well is made at 200 uL; the step is spelled out, so
        # the last well keeps it (no final volume to level the wells to afterwards)
        frame.final = frame.total = None
        return pair[1].value, pair[0].value, True
    step_q = (
        pair[0]
        if pair is not None
        else next(
            (
                q
                for q in frame.volumes
                if _STEP_VOLUME.search(frame.text[: q.start])
                or _STEP_AFTER.match(frame.text[q.end :])
            ),
            None,
        )
    )
    top = next(
        (
            q
            for q in frame.volumes
            if _TOP.match(frame.text[q.end :]) or _TOP_BEFORE.search(frame.text[: q.start])
        ),
        None,
    ) or (_stock_amount(frame, stock) if step_q is None else None)  # (never "10 uL X into 90")
    each = next((q for q in frame.volumes if _EACH.match(frame.text[q.end :])), None)
    if frame.final is None and top is None and step_q is None and each is not None:
        final = each.value  # "S1 = neat stock (200 uL in A1), S2-S7 1:2, 100 uL each"
        return final, round(final / (k - 1), 4), False
    if frame.final is not None:
        final = frame.final.value
        t = round(final / (k - 1), 4)
    elif top is not None:  # "200 uL top standard": the first well's stock, V * k / (k - 1)
        final = round(top.value * (k - 1) / k, 4)
        t = round(top.value / k, 4)
    elif step_q is not None:
        t = step_q.value
        final = round(t * (k - 1), 4)
    elif (
        frame.volume is not None
        and (
            re.search(r"\b(?:per\s+well|each\s+well|in\s+each|final)\b", frame.text, _FLAGS)
            or (  # "2-fold, A1 to G1, 100 uL per point": the volume of each well ("with 100 uL":
                # of each step or of each well? asked)
                len(frame.volumes) == 1
                and not re.search(r"\b(?:with|using|by|of)\s+$", frame.text[: frame.volume.start])
            )
        )
    ):
        final = frame.volume.value
        t = round(final / (k - 1), 4)
    elif (fill := _diluent_fill(frame, diluent)) is not None:
        final = fill.value
        t = round(final / (k - 1), 4)
    elif held is not None:  # the diluent already in the wells says each well's volume
        final, t = held, round(held / (k - 1), 4)
    else:
        raise Ask(
            "What final volume should each well hold (or how much should each step transfer)?",
            ["volume"],
            ["100 uL final volume", "transfer 50 uL each step"],
        )
    return final, t, step_q is not None


def fold_asking_once(
    frame: Frame, said: Callable[[Frame], float], probes: list[Callable[[], object]], empty: bool
) -> float:
    """The fold (:func:`fold_of`); when the request gives none, one question about everything
    the series leaves open, so the person answers once: its fold, and the plate or wells the
    ``probes`` cannot settle (each raises the :class:`Ask` it would), and the volume when
    nothing in the request or in the (``empty``) plate gives one."""
    try:
        return fold_of(frame, said)
    except Ask as ask:
        if ask.missing != ["fold"] or into_pair(frame) is not None:
            raise
        asks: list[Ask] = []
        for probe in probes:
            try:
                probe()
            except Ask as other:
                asks.append(other)
                break  # the later probes need what this one could not settle
        questions = [a.question.rstrip("?") for a in asks if set(a.missing) <= _WHERE]
        missing = [m for a in asks if set(a.missing) <= _WHERE for m in a.missing]
        if empty and not frame.volumes and frame.final is None and frame.total is None:
            questions.append("what final volume should each well hold")
            missing.append("volume")
        if not missing:
            raise
        said_all = [ask.question.rstrip("?"), *(q[0].lower() + q[1:] for q in questions)]
        question = ", ".join(said_all[:-1]) + ", and " + said_all[-1] + "?"
        raise Ask(question, [*ask.missing, *missing], ask.options) from None


_WHERE = {"plate", "wells"}
