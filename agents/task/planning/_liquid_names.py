"""How people shorten a lab's liquid names.

- Short forms of words, as notebooks write them ("stop soln", "TMB sub", "ddH2O", "EtOH",
  "capture antibody" for "capture Ab"): a name may be written with any member of a word's group
  in place of that word. A short form that is also an everyday lab word of its own ("ab",
  "abs", "sub", "dil", "med", "std") stands for its long form only inside a name of two or
  more words: "read abs" is an absorbance, never a lab's "antibody".
- One distinctive word of a longer name ("TMB" for "TMB substrate", "water" for "nuclease
  free H2O") or a run of its words ("master mix" for "2x SYBR master mix"), when no other
  liquid of the lab shares it.
- Notebook shorthand: the start of a name's first word ("amp" for "ampicillin 256 ug/mL",
  "cipro" for "cipro-HCl") when it starts no other name and is no word of lab English or
  common shorthand for something else ("col", "std", "dil").
"""

from __future__ import annotations

import re
from functools import lru_cache

from rapidfuzz.distance import DamerauLevenshtein

from agents.task.planning._vocabulary import VOCABULARY

_GROUPS: tuple[tuple[str, ...], ...] = (
    ("solution", "soln", "sol'n", "sln", "sol"),
    ("buffer", "buff", "buf", "bfr"),
    ("diluent", "dil"),
    ("standard", "std", "stnd"),
    ("antibody", "ab"),
    ("substrate", "substr", "sub"),
    ("medium", "media", "med"),
    ("sample", "smpl", "samp"),
    ("compound", "cmpd", "cpd"),
    ("reagent", "reag", "rgt"),
    ("control", "ctrl", "ctl"),
    ("library", "lib"),
    ("water", "h2o", "dh2o", "ddh2o"),
    ("ethanol", "etoh"),
    ("methanol", "meoh"),
    ("isopropanol", "ipa"),
    ("detection", "det"),
    ("concentrated", "conc"),
)
# Short forms too common as words of their own to stand alone for a one-word liquid.
_ONLY_IN_NAMES = frozenset(
    ["sol", "buf", "dil", "std", "ab", "sub", "med", "media", "samp", "lib", "det", "conc", "ipa"]
)
_BY_WORD = {w: g for g in _GROUPS for w in g}


@lru_cache(maxsize=512)
def alias_pattern(name: str) -> str | None:
    """A regex for ``name`` with each word that has short forms written any of its ways, or
    None when no word of the name has any."""
    words = [w for w in re.split(r"[_\-\s]+", name) if w]
    parts, changed = [], False
    for w in words:
        group = _BY_WORD.get(w.lower())
        if group is None:
            parts.append(re.escape(w))
            continue
        forms = [f for f in group if len(words) > 1 or f not in _ONLY_IN_NAMES]
        forms = sorted({*forms, w.lower()}, key=len, reverse=True)
        changed = changed or len(forms) > 1
        parts.append("(?:" + "|".join(re.escape(f) + r"\.?" for f in forms) + ")")
    return r"[\s_\-]?".join(parts) if changed else None


def _words(name: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9][\w+-]*", name)


# The words of a name for its initials: spaces, hyphens and a capital inside a word
# ("CellTiter-Glo": Cell, Titer, Glo - "CTG").
_PARTS = re.compile(r"[\s-]+|(?<=[a-z])(?=[A-Z][a-z])")


def by_word(liquids: list[str], taken: set[str], not_a_liquid: frozenset[str]) -> dict[str, str]:
    """A word (or one of its short forms) of one multi-word liquid's name and of no other's
    ('TMB', 'conjugate', 'water' for 'nuclease free H2O'); ``taken`` are other lab names."""
    owners: dict[str, set[str]] = {}
    for name in liquids:
        parts = [x for x in re.split(_PARTS, name) if x[:1].isalpha()]  # "CellTiter-Glo 2.0"
        if 3 <= len(parts) <= 5 and re.split(r"[\s-]+", name)[0][:1].isalpha():
            for initials in _initials(parts):  # "NFW": nuclease-free water, "CTG": CellTiter-Glo
                if initials not in VOCABULARY:  # never a word the request is made of ("add")
                    owners.setdefault(initials, set()).add(name)
        words = [w for w in _words(name) if len(w) >= 3 and w[0].isalpha()]
        head = re.fullmatch(r"([A-Za-z][A-Za-z0-9]{2,})-(?:[A-Za-z]{3,}|\d{2,})", name)
        if head:  # "TMB" for "TMB-Ultra", "RPMI" for "RPMI-1640" (never "PBS" for "PBS-T")
            owners.setdefault(head.group(1).lower(), set()).add(name)
        if len(_words(name)) < 2:
            continue
        for w in words:
            if w.lower() in _OTHER_SHORTHAND:
                continue  # "Std curve:" names no "gDNA std 20 ng/uL"; "the std" stays open
            forms = {w.lower()} | {
                f for f in _BY_WORD.get(w.lower(), ()) if f not in _ONLY_IN_NAMES and len(f) >= 3
            }
            if w.lower().endswith("ium"):  # "growth medium": "media" too
                forms.add(w.lower()[:-2] + "a")
            forms |= {  # "trypsin" for "0.05% trypsin-EDTA" (never "free" of "nuclease-free")
                x.lower()
                for x in w.split("-")[1 if w.count("-") == 0 else 0 :]
                if (len(x) >= 5 or (len(x) >= 3 and x.isupper())) and x.lower() not in VOCABULARY
            }
            for f in forms:
                owners.setdefault(f, set()).add(name)
    singles = {n.lower() for n in liquids if " " not in n}
    return {
        **shorthand(liquids, taken | not_a_liquid),
        **{
            w: next(iter(names))
            for w, names in owners.items()
            if len(names) == 1 and w not in not_a_liquid and w not in singles and w not in taken
        },
    }


# Notebook shorthand for other things than a liquid: never the start of a liquid's name.
_OTHER_SHORTHAND = frozenset(
    [
        "col",
        "cols",
        "row",
        "rows",
        "rep",
        "reps",
        "std",
        "stds",
        "dil",
        "dils",
        "conc",
        "vol",
        "vols",
        "temp",
        "min",
        "mins",
        "sec",
        "secs",
        "hrs",
        "pos",
        "neg",
        "ctrl",
        "ctrls",
        "max",
        "tot",
        "fin",
        "init",
        "sam",
        "samp",
        "mult",
        "multi",
        "chan",
        "tip",
        "tips",
        "pip",
        "well",
        "wells",
        "plat",
        "plt",
        "res",
        "resv",
        "blk",
        "ser",
        "seri",
    ]
)


def shorthand(liquids: list[str], taken: set[str] | frozenset[str]) -> dict[str, str]:
    """Each start (3 letters or more) of one liquid name's first word -> that name; ``taken``:
    other names and words (labware, instruments), whose starts are never a liquid's."""
    owners: dict[str, set[str]] = {}
    for name in liquids:
        head = name.split()[0].split("-")[0]
        if len(head) < 5 or not head.isalpha():
            continue
        word = head.lower()
        for n in range(3, len(word) + (word != name.lower())):
            owners.setdefault(word[:n], set()).add(name)
    lows = {n.lower() for n in liquids}
    return {
        w: next(iter(names))
        for w, names in owners.items()
        if len(names) == 1
        and w not in VOCABULARY
        and w not in _OTHER_SHORTHAND
        and w not in lows
        and not any(k.lower().startswith(w) for k in taken)
    }


def _initials(words: list[str]) -> set[str]:
    """The first letters of a name's words, each word also by its short forms' letters."""
    out = {""}
    for w in words:
        firsts = {f[0] for f in (w.lower(), *_BY_WORD.get(w.lower(), ())) if f[0].isalpha()}
        out = {o + f for o in out for f in firsts}
    return {o for o in out if len(o) == len(words)}


def by_phrase(liquids: list[str]) -> list[tuple[str, re.Pattern[str]]]:
    """Runs of two or more words inside a longer name that no other liquid's name holds
    ("master mix" for "2x SYBR master mix", "primer mix" for "primer mix F+R"), longest first."""
    runs: dict[str, set[str]] = {}
    for name in liquids:
        words = [w.lower() for w in _words(name)]
        for n in range(2, len(words)):
            for i in range(len(words) - n + 1):
                if words[i + n - 1].isdigit() and i + n < len(words):
                    continue  # "BSA 2" of "Pierce BSA 2 mg/mL" is no name: "BSA 2-fold"
                runs.setdefault(" ".join(words[i : i + n]), set()).add(name)
    out = []
    for run, names in sorted(runs.items(), key=lambda kv: -len(kv[0])):
        if (
            len(names) == 1
            and run not in {n.lower() for n in liquids}
            and re.search(r"[a-z]{3}", run)  # "2 0" of "CellTiter-Glo 2.0" is no name: "20 uL"
        ):
            pattern = r"[\s_\-]?".join(re.escape(w) for w in run.split())
            out.append(
                # never the "1" of a ratio after the name ("IgG standard 1:2" for "IgG
                # standard 1 mg/mL"): a number cut from its unit names nothing
                (
                    next(iter(names)),
                    re.compile(rf"(?<![\w]){pattern}(?:e?s)?(?![\w]|[:/.]\d)", re.I),
                )
            )
    return out


_GENERIC_TAIL = re.compile(r"\s+(?:medium|media|broth|buffer|solution|soln)$", re.I)


def without_tail(liquids: list[str]) -> list[tuple[str, re.Pattern[str]]]:
    """A name said without its generic last word when what is left carries an acronym
    ("0.5x MS" for "0.5x MS medium", "1x TE" for "1x TE buffer"); matched in its own case, so
    "ms" (milliseconds) never names a liquid, and never when another name starts the same."""
    out = []
    for name in liquids:
        tail = _GENERIC_TAIL.search(name)
        head = name[: tail.start()] if tail else ""
        if (
            not re.search(r"\b[A-Z]{2,}\b", head)
            or " " not in head  # "TE", "RIPA" alone: the by-word reading's to decide
            or any(o != name and o.lower().startswith(head.lower()) for o in liquids)
        ):
            continue
        pattern = r"\s*".join(re.escape(w) for w in head.split())
        out.append((name, re.compile(rf"(?<![\w.]){pattern}(?![\w%])")))
    return out


# an analyte's or a gene's code right before a word ("IL-10 calibrator", "CXCL8 standard")
# ... or a kit reagent's qualifier ("sample diluent" is no "Reagent Diluent (1X)")
_CODE_BEFORE = re.compile(
    r"(?<![\w-])([A-Za-z]{2,}-?\d+[A-Za-z]?|sample|assay|reagent|calibrator|standard|wash|coating"
    r"|blocking|detection|capture|dilution|conjugate)[\s_-]+$",
    re.IGNORECASE,
)


def by_word_mentions(
    text: str, words: dict[str, str], taken: list[tuple[int, int]]
) -> list[tuple[str, int, int]]:
    """(liquid, start, end) for each word of ``text`` outside ``taken`` that stands for one
    liquid ("TMB", "primers"), widened over the name's own words after it ("SYBR mix")."""
    out = []
    for m in re.finditer(r"(?<![\w#«])[A-Za-z][\w-]{2,}(?![\w»])", text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        low = m.group(0).lower()
        forms = [low, *([low[:-1]] if low.endswith("s") else [])]  # "primers": "primer"
        name = next((words[w] for w in forms if w in words), None)
        if name is None:
            continue
        code = _CODE_BEFORE.search(text[: m.start()])
        if code and code.group(1).lower() not in name.lower().split():
            continue  # "IL-10 calibrator" is no short "IL-6 calibrator": another analyte
        end = m.end()
        while nxt := re.match(r"[\s_-]+([A-Za-z][\w+-]*)", text[end:]):
            if nxt.group(1).lower() not in name.lower().split():
                break
            end += nxt.end()
        out.append((name, m.start(), end))
    return out


_COUNTED = re.compile(r"(?<![\w.:/-])(?<!column )(?<!col )(?<!row )\d{1,2}\s+$", re.IGNORECASE)
_HELD_IN = re.compile(r"\s+(?:in|from)\s+(?:the\s+)?(?:plate\s+)?", re.IGNORECASE)


def counted_points(written: str, start: int, end: int, text: str, plates: list[int]) -> bool:
    """Whether a plural liquid name after a count is a count of points, not the liquid ("7
    standards and a zero", even where the lab has a liquid "standard") - unless it is counted
    where it is ("pool the 8 libraries in libs_in column 1"; ``plates``: where labware names
    start)."""
    return (
        written.lower().endswith("s")
        and bool(_COUNTED.search(text[:start]))
        and not any(_HELD_IN.fullmatch(text[end:at]) for at in plates)
    )


def misspelt(low: str, names: list[str], by_word: dict[str, str]) -> str | None:
    """The one lab liquid a misspelt name means, beyond what a plain edit distance allows:
    an acronym with two letters swapped ("PSB" for "PBS": three letters allow no other edit),
    or a sure typo of the word that names one multi-word liquid ("watr" for "milli-Q water").
    Two candidates as close: None (the planner asks)."""
    if len(low) == 3:  # the name itself, or the word naming one longer name ("sterile PBS")
        short = [(n, n) for n in names if len(n) == 3]
        short += [(w, n) for w, n in by_word.items() if len(w) == 3]
        swapped = {
            re.sub(r"[\s\-]+", "_", n.lower()): n
            for w, n in short
            if sorted(w.lower()) == sorted(low) and _one_edit(low, w.lower())
        }
        return next(iter(swapped.values())) if len(swapped) == 1 else None
    words = [w for w in by_word if len(w) >= 4 and w.isalpha()]
    if len(low) < 4 or not low.isalpha() or not words:
        return None
    edits = {w: DamerauLevenshtein.distance(low, w) for w in words}
    least = min(edits.values())
    near = {by_word[w] for w, e in edits.items() if e == least}
    word = next(w for w, e in edits.items() if e == least)
    allowed = 1 if max(len(low), len(word)) < 8 else 2
    if least == 0 or least > allowed or len(near) != 1 or word[:1] != low[:1]:
        return None  # the first letter is rarely the typo; "wash" is no "watr"
    return by_word[word]


def _one_edit(a: str, b: str) -> bool:
    return DamerauLevenshtein.distance(a, b) == 1


# A role said as a label before the liquid that fills it ("diluent 1x PBS", "diluent: PBS",
# "assay diluent = PBS"): the role word names no liquid of its own, even where one lab liquid
# has it as a word ("Standard Diluent Buffer").
_ROLE_WORD = re.compile(r"(?:standard\s+|std\s+|assay\s+)?(?:diluent|dil)", re.IGNORECASE)
_ROLE_GAP = re.compile(r"\s*(?:[:=–-]|is\b)?\s*(?:the\s+)?", re.IGNORECASE)


def role_labels(spans: list[tuple[int, int]], text: str) -> set[int]:
    """The indexes of ``spans`` (sorted by start) that are a role word said as the label of the
    liquid named right after it."""
    return {
        i
        for i, (a, b) in enumerate(spans[:-1])
        if _ROLE_WORD.fullmatch(text[a:b]) and _ROLE_GAP.fullmatch(text[b : spans[i + 1][0]])
    }
