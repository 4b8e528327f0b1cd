"""The words that make a clause a dilution: a series (standards, points, blanks, a ratio
carried along a line), a ratio made of a source, a strength made from a stock, a curve."""

from __future__ import annotations

import re

from agents.task.planning._entities import Entities

_FLAGS = re.IGNORECASE

# "Standards - 2-fold dilution of ...", "8 points of 1:2", "..., A8 blank", "1:3, 8
# concentrations", "dose-response": a series, never one ratio dilution repeated in every well.
_SERIES_WORDS = re.compile(
    r"\b(?:standards|stds|curves?|points?|pts|blanks?|concentrations|concs|doses|"
    r"dose[\s-]+response)\b",
    _FLAGS,
)
# "add 200 uL of 1:10 dye in buffer", "mix 1 part dye with 9 parts buffer": a dilution made here.
_WITH = re.compile(r"\b(?:in|into|with)\b|^\s*(?:\+|plus)\s*$", _FLAGS)
_MIXED_IN = re.compile(
    r"\d\s*u[lL]\s+of\s+(?:an?\s+|the\s+)?(?:1\s*[:/]|\d+\s*-?\s*fold)|\bparts?\b", _FLAGS
)
# "make 70% ethanol ...", "prepare 1 mL of 1x buffer ...": a strength to make from a stock
_MAKE_STRENGTH = re.compile(
    r"^(?:please\s+)?(?:make|prepare|mix\s+up)\s+(?:up\s+)?(?:a\s+|some\s+)?"
    r"(?:[\d.]+\s*(?:u[lL]|µ[lL]|m[lL])\s+(?:of\s+)?)?[\d.]+\s*(?:%|x|[munp]M)(?!\w)",
    _FLAGS,
)
_SERIAL = re.compile(r"\b(?:serial(?:ly)?|series|ladder|titrat\w*|step[\s-]?wise|->)", _FLAGS)
_ALONG = re.compile(r"\b(?:across|down|along)\b", _FLAGS)
# "1:2 across row C", "1:3 down column 1": a ratio carried along a line is a serial dilution
# (not "1:3 dilutions of dye, 300 uL total, across row D": one ratio in every well).
_STEP_ALONG = re.compile(
    r"\b1\s*(?::|/|in)\s*\d+(?:\.\d+)?\s+(?:steps?\s+)?"
    # "dye 1:2 in buffer across row B": the diluent said between the fold and the line
    r"(?:(?:in|with)\s+(?!row|col|the\s+(?:row|col))(?:[\w%.-]+\s+){1,4}?)?(?:across|down|along)\b"
    # "2-fold dilutions, mic96 F1 -> F8": the first and last wells of one plate's line
    r"|(?<![\w-])[A-Pa-p]\d{1,2}\s*->\s*[A-Pa-p]\d{1,2}\b"
    # "S1 = 240 uL X in P A3, 2-fold to H3": a fold carried on to the well it ends at
    r"|\b\d+(?:\.\d+)?\s*-?\s*fold\s+(?:serial(?:ly)?\s+)?(?:(?:down|across|along)\s+)?to\s+[A-Pa-p]\d",
    _FLAGS,
)
# Buffers named for another job (lysing, washing, blocking, eluting, loading a gel): never
# the lab's diluent by default, however few other buffers the lab holds
WORKS = re.compile(
    r"\b(?:wash\w*|lysis|ripa|block\w*|elution|binding|extraction|coating|ligase|stop|loading"
    r"|laemmli|running|transfer)\b",
    _FLAGS,
)
# "1:10 of X into Y", "make a 1/50 of X ...": a ratio said as what is made of a source
_RATIO_OF = re.compile(
    r"^(?:(?:please\s+)?(?:make|prepare|do|set\s+up)\s+)?(?:an?\s+)?1\s*[:/]\s*\d+(?:\.\d+)?\s+of\b",
    _FLAGS,
)
_FINAL_SAID = re.compile(r"\b(?:final|total)\b|\bin(?:to)?\s+(?:a\s+)?[\d.]+\s*[uµm][lL]\b", _FLAGS)
_CURVE = re.compile(
    r"\b(?:standard|std\.?|calibration)\s+(?:curves?|crvs?)\b|\bstandards?\s+series\b", _FLAGS
)


_MAKE_STANDARDS = re.compile(
    r"^(?:make|prepare|set\s+up|do|run)\s+(?:the\s+|a\s+|some\s+)?(?:[\w-]+\s+){0,3}"
    r"(?:standards|stds|calibrators|calibration\s+(?:series|standards))\b"
    # "Standards in duplicate on elisa_p1 columns 1 and 2.": the curve's place, its recipe after
    r"|^(?:[\w-]+\s+){0,3}(?:standards|stds)\s+(?:in\s+(?:duplicate|triplicate|quadruplicate)\s+)?"
    r"(?:on|in|into)\s+(?!duplicate|triplicate)\S",
    _FLAGS,
)


def carried_by_steps(header: Entities) -> bool:
    """A dilution sentence with a fold and no volume, whose steps the clauses after it may
    carry ("2-fold across row A, transfer 150 uL"); never a ratio made into other wells ("a
    1:20 of the sera in A3-H3 into dil_blk A3-H3: 10 uL serum + 190 uL PBS"), which no chain
    carries."""
    if header.fold is None or header.volumes():
        return False
    text = header.text
    return (
        header.fold[1] == "fold"
        or bool(_SERIAL.search(text) or _ALONG.search(text))
        or "->" in text
    )


# "seven 1:2 dilutions of standard across row B": a counted run of one fold is a series (not
# "1:10 dilutions of the samples into 12 wells": one ratio in every well)
COUNTED_FOLDS = re.compile(
    r"\b(?:\d{1,2}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
    r"(?:1\s*[:/]\s*\d+|\d+(?:\.\d+)?\s*-?\s*fold|(?:two|three|four|five|ten)-?fold)\s+"
    r"(?:serial\s+)?dilutions\b",
    _FLAGS,
)

# "Don't discard the excess from the last well", "leave the extra in H1": the series ends
# with its last well holding the excess (no discard), whatever final volume was said.
KEEP_EXCESS = re.compile(
    r"\b(?:do\s*n[o']?t|never|no\s+need\s+to)\s+(?:discard|remove|throw\s+away|dump|waste|aspirate)\b"
    r"|\bno\s+(?:discard|waste)\b|\bwithout\s+discarding\b"
    r"|\b(?:leave|keep)\s+(?:the\s+)?(?:excess|extra|surplus)\b"
    r"|\blast\s+well\s+keeps\b"
    # "leave the last well as is", "keep the final well untouched": no excess taken from it
    r"|\b(?:leave|keep)\s+(?:the\s+)?(?:last|final|end)\s+(?:wells?|ones?|dilutions?|points?)\s+"
    r"(?:as\s+(?:it\s+is|they\s+are|is)|alone|untouched)",
    _FLAGS,
)


IN_ALONG = re.compile(r"#+\s+(?:in|with)\s+#+[^,;]*?\b(?:across|down|along)\b", _FLAGS)


def curve_label(label: str) -> bool:
    """ "Standard curve:", "Standards in triplicate:", "Serial dilution:": a label that says
    the clauses under it make a dilution series."""
    label = label.replace("_", " ")  # "Std curve:" on a bench whose plate is std_curve
    return bool(
        _CURVE.search(label)
        or re.search(r"\b(?:serial|dilution\s+series|standards|stds|titrations?)\b", label, _FLAGS)
        # "BCA curve:", "curve for BCA:" (never a growth, melt or time curve: no series)
        or (
            re.search(r"\bcurves?\b", label, _FLAGS) is not None
            and not re.search(r"\b(?:growth|melt\w*|kinetic\w*|time|od|death)\b", label, _FLAGS)
        )
    )


def carried_fold(text: str, ents: Entities) -> bool:
    """A fold carried along a line of wells: "Dye: 1:2 across plate_2 row B, 100 uL final",
    "X 2-fold, plate column 1, 100 uL final, H1 blank" (a k-fold with a level or a blank)."""
    return (
        ents.fold is not None
        and bool(ents.wellsets)
        and bool(
            re.match(r"^[^,;]*\b(?:across|down)\b", text)
            or (ents.fold[1] == "fold" and (ents.blanks or _FINAL_SAID.search(text)))
        )
    )


_FOR_FILL = re.compile(
    r"\btips?\s+(?:for|with|when\s+adding|to\s+add)\s+(?:all\s+|each\s+of\s+|each\s+|every\s+)?(?:the\s+)?"
    r"(?P<what>[\w%+.()-]+(?:\s+[\w%+.()-]+){0,3}?)\s*(?:additions?|fills?|dispenses?)?"
    r"\s*(?:please\b)?\s*(?:[,;.]|$)",
    _FLAGS,
)


def tips_for_diluent(text: str, diluent: str) -> bool:
    """ "same tip for the buffer", "one tip for all the assay buffer": the tip rule said is
    the diluent's fill only, never the carrying steps of the chain."""
    m = _FOR_FILL.search(text)
    if m is None:
        return False
    what = m["what"].lower().strip()
    return what in ("buffer", "diluent", "dilutent", diluent.lower()) or what.endswith(" diluent")


_TIP_RULE = re.compile(
    r"(?:please\s+)?(?:use\s+)?(?:the\s+)?(?:same|one|a\s+single|single|a\s+fresh|fresh|new|separate)"
    r"\s+tips?\s+(?:for|with)\s+[^,;.]{1,40}?(?:\s+please)?\s*[.!]?",
    _FLAGS,
)


def tip_rule(text: str) -> bool:
    """The clause is only a tip rule for one liquid's additions ("Same tip for the buffer.")."""
    return bool(_TIP_RULE.fullmatch(text.strip()))


# "Standards: make a 1:50 dilution of X in Y, 200 uL, P H1": one dilution said under a curve's
# label is that one dilution, not a series
_ONE_DILUTION = re.compile(
    r"\b(?:an?|one|single)\s+(?:1\s*[:/]\s*\d+(?:\.\d+)?|1\s+in\s+\d+|[\w.]+[\s-]?fold)\s+"
    r"dilution\b(?!s|\s+(?:series|curve|ladder))",
    _FLAGS,
)


def series_label(label: str, text: str) -> bool:
    """A curve's label over a clause that is not one single dilution."""
    return curve_label(label) and not _ONE_DILUTION.search(text)


# "normalise A1-C1 (40, 20, 10 ng/uL) to 5 ng/uL": the samples' concentrations, never a series
# ("bring A1, B1, C1 (16, 8, 4 nM) to 2 nM")
_LEVELLED = re.compile(
    r"\b(?:normali[sz]|equali[sz])|\b(?:bring|adjust)\b[^;]*?\bto\s+(?:a\s+)?(?:final\s+)?"
    r"\d+(?:\.\d+)?\s*(?:[pnuµm]g\s*/|[pnuµm]M\b)",
    re.IGNORECASE,
)
