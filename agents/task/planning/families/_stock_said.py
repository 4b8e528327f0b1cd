"""Which liquid a dilution dilutes and which it dilutes with, as the sentence says: "in PBS",
"PBS as diluent", "top standard = BSA", "a standard curve with BSA", "A1-A8 with BSA, 1:2 in
PBS" (filled with the one, made up in the other). Asked when the words leave it open."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Mention
from agents.task.planning._outcomes import Ask, Refuse

_FLAGS = re.IGNORECASE

_DILUENT = re.compile(
    r"\b(?:with|using|in|into)\s+(?:the\s+)?(?P<a>«q\d+»|[\w-]+(?:\s[\w-]+)?)\s+(?:as\s+(?:the\s+)?diluent)"
    r"|\bdiluent\s*(?:is|:|=)\s*(?P<b>«q\d+»|[\w-]+)",
    _FLAGS,
)


_DILUENT_AFTER = re.compile(r"\s*(?:\(\s*)?(?:=\s*|is\s+|as\s+)?(?:the\s+)?diluent\b", _FLAGS)
_DILUENT_BEFORE = re.compile(r"\bdiluents?\s*(?:is|=|:|-)?\s*(?:the\s+)?$", _FLAGS)


_PIECE_START = re.compile(r"[,;]\s*$")
_PIECE_END = re.compile(r"\s*(?:[,;.]|$)")
# "in PBS", "conc + water (1:10)": the liquid said after these is the diluent
# ("a standard curve with BSA": what the curve is made of, the stock)
_CURVE_OF = r"(?:curves?|standards?|stds?)\s+(?:with|using|from|of)\s+(?:the\s+)?$"
_IN_IT = re.compile(
    r"(?<!\bcurve\s)(?<!\bcurves\s)(?<!\bstandards\s)\b(?:with|using)\s+(?:the\s+)?$"
    r"|\b(?:in|into)\s+(?:the\s+)?$|\S\s*(?:\+|\bplus)\s*$",
    _FLAGS,
)
_STOCK_ROLE = (
    r"(?:top|highest|first)\s+(?:standard|std|point|conc\w*)\b|(?:S1|std\s*1|stock)\b"
    r"|top(?=\s*(?:[,;.)]|$))"
)
_STOCK_AFTER = re.compile(
    rf"\s*(?:\(\s*)?(?:[=:-]\s*|(?:is|as|being)\s+)?(?:the\s+|our\s+)?(?:{_STOCK_ROLE})", _FLAGS
)
# "resazurin 2-fold in assay medium", "gentamicin (abx_src B2) 1:2 across ...": the stock
_FOLD_AFTER = re.compile(
    r"\s*(?:\([^()]*\)\s*)?(?:(?:is\s+|being\s+)?(?:serially\s+)?dilut\w*\s+(?:by\s+)?)?"
    r"(?:(?!1\s*x\b)\d+(?:\.\d+)?\s*-?\s*(?:fold|x)\b|1\s*(?::|/|in)\s*\d)",  # ("1x PBS")
    _FLAGS,
)
_STOCK_BEFORE = re.compile(
    rf"(?:{_STOCK_ROLE}|\btop(?=\s*[=:]))\s*(?:is|=|:|-)?\s*(?:the\s+)?(?:neat\s+)?$|\b{_CURVE_OF}",
    _FLAGS,
)


_NAMES_CURVE = re.compile(
    r"\s*(?:(?:std|standard|calibration)s?\s+)?(?:curves?|standards?|stds?|assay)\b", _FLAGS
)
_ONLY = re.compile(r"[\s-]*only\b", re.IGNORECASE)


def stock_or_none(frame: Frame, p: r.Planning) -> str | None:
    """The liquid a dilution heading dilutes, None when it leaves that to its steps."""
    try:
        return _stock(frame, p)
    except (Ask, Refuse):
        return None


def _stock(frame: Frame, p: r.Planning) -> str:
    diluent_at = _DILUENT.search(frame.text)
    named = [
        m
        for m in frame.liquids
        if not (diluent_at and m.start >= diluent_at.start() and m.start < diluent_at.end())
    ]
    said_as_diluent = [  # "in PBS", "PBS as diluent", "diluent: PBS"
        m
        for m in named
        if _IN_IT.search(frame.text[: m.start])
        or _DILUENT_AFTER.match(frame.text[m.end :])
        or _DILUENT_BEFORE.search(frame.text[: m.start])
        or (_PIECE_START.search(frame.text[: m.start]) and _PIECE_END.match(frame.text[m.end :]))
    ]  # (or a liquid said alone after the dilution: "...; 150 uL each; PBS.")
    # "PicoGreen std curve: lambda DNA top standard, ...": the assay names the curve, the
    # liquid said to be the top standard (or the stock) is what is diluted
    marked = [
        m
        for m in named
        if _STOCK_AFTER.match(frame.text[m.end :]) or _STOCK_BEFORE.search(frame.text[: m.start])
    ] or [m for m in named if m not in said_as_diluent and _FOLD_AFTER.match(frame.text[m.end :])]
    if len({m.name for m in marked}) != 1:  # "PicoGreen std curve: lambda DNA 2 ug/mL, 2-fold
        # in TE": the assay's reagent names the curve; the other liquid said is its stock
        heads = [m for m in named if _NAMES_CURVE.match(frame.text[m.end :])]
        rest = [  # (said with its fold: "lambda DNA 2 ug/mL, 2-fold in TE")
            m
            for m in named
            if m not in heads
            and not _IN_IT.search(frame.text[: m.start])
            and _FOLD_AFTER.match(frame.text[m.end :].removeprefix(","))
        ]
        marked = rest if heads and len({m.name for m in rest}) == 1 else marked
    if len({m.name for m in marked}) == 1:
        named = marked
    elif len({m.name for m in named}) == 2 and (withs := _with_and_in(frame.text, named)):
        return r.liquid(withs[0], p)  # "A1-A8 with BSA, 1:2 in PBS": filled with the one
    said = p.lex.fix_words(frame.clause.label) if frame.clause.label else ""  # "Std curve:"
    label = p.lex.liquid_mentions(said) if said else []
    if named and all(m in said_as_diluent for m in named) and len({m.name for m in label}) == 1:
        named = label  # "BSA standard: 7 steps of 1:2 in PBS ...": the label's is the stock
    if (
        p.liquid is not None
        and _OF_IT.search(frame.text)
        and all(_AS_DILUENT.search(frame.text[: m.start]) for m in named)
        and all(m.name != p.liquid for m in named)
    ):
        return p.liquid  # "The standard is in A1. Make a 2-fold series of it ... with diluent"
    if (  # "quant2 cols 1-2, BSA stock: 1:2 ... in PBS": the heading's liquid is the stock
        named
        and p.liquid is not None
        and all(m.name != p.liquid for m in named)
        and all(m in said_as_diluent for m in named)
    ):
        return p.liquid
    if not named and frame.liquid is not None:
        named = [frame.liquid]  # "Standards in triplicate: rows A-C, 2-fold ...": the label's
    if not named or all(
        _IN_IT.search(frame.text[: m.start])
        or _DILUENT_AFTER.match(frame.text[m.end :])
        or _DILUENT_BEFORE.search(frame.text[: m.start])
        or _ONLY.match(frame.text[m.end :])  # "C8 NTC (water only)": what a blank holds
        for m in named
    ):  # "2-fold dilutions in Reagent Diluent down column 3": what dilutes, never what is diluted
        raise Ask("Which liquid should I dilute?", ["liquid"], r.liquids(p.world))
    return r.liquid(named[0], p)


_WITH = re.compile(r"(?<!dilut)(?<!diluted\s)\b(?:with|w/)\s+(?:the\s+)?$", _FLAGS)
_IN = re.compile(r"\b(?:in|into)\s+(?:the\s+)?$", _FLAGS)


def _with_and_in(text: str, named: list[Mention]) -> list[Mention]:
    """Of two liquids, the one said after "with" when the other is said after "in"."""
    withs = [m for m in named if _WITH.search(text[: m.start])]
    ins = [m for m in named if _IN.search(text[: m.start])]
    return withs if len(withs) == 1 and len(ins) == 1 and withs[0].name != ins[0].name else []


_OF_IT = re.compile(r"\b(?:of|dilute|serially\s+dilute)\s+(?:it|them|this|that)\b", _FLAGS)
_AS_DILUENT = re.compile(r"\b(?:with|using|in|into)\s+(?:the\s+|some\s+)?$", _FLAGS)
