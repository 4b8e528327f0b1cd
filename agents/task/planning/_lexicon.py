"""The words of one lab and of lab English, matched as people type them (``rapidfuzz``).

Three kinds of names are found in a clause:

- labware: its id however it is spaced ("plate_1", "plate 1", "Plate-1", "plate1"), the words
  its id or type contains ("the reservoir", "the trough", "the PCR plate"), and near-misses
  ("palte_1"). A name whose number differs ("plate_3" in a lab with plate_1 and plate_2) is a
  different plate, not a typo: it is reported as unknown, so the planner asks.
- liquids: the names found in the lab's wells, however they are spaced or pluralised, quoted
  names verbatim, and near-misses above :data:`FLOOR`.
- instruments: ids and the words for their kinds ("the reader", "heater-shaker").

Misspelt words of lab English ("trasnfer", "seriel", "absorbace") are corrected against a
fixed vocabulary before anything else reads a clause, only when the match is close and shares
its first two letters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from agents.task.planning._labware_names import ROLE_WORDS, described, role_holder
from agents.task.planning._liquid_names import by_word_mentions, misspelt, role_labels
from agents.task.planning._name_patterns import (
    CULTURE,
    MEDIUM,
    alias_rxs,
    any_instrument_word,
    by_word_of,
    every_well_rx,
    instrument_rxs,
    instrument_word_rxs,
)
from agents.task.planning._vocabulary import (
    _SHORT_VERBS,
    _VOCAB_LIST,
    _WORD,
    NOT_TYPOS,
    VOCABULARY,
)
from agents.task.planning.models import LabView

# A typo is a few edits (a transposition counts as one): up to sure_edits(len) the name is
# taken; one edit more and the planner asks "did you mean ...?"; beyond that it is not that
# name. Scores are 100 * (1 - edits / length); FLOOR is the lowest score ever matched.
FLOOR = 70.0
_FLAGS = re.IGNORECASE


def sure_edits(length: int) -> int:
    """How many edits still count as a typo of a word this long."""
    return 0 if length < 4 else 1 if length < 8 else 2


def closest(word: str, names: list[str]) -> tuple[str, float, bool] | None:
    """(name, score, sure) of the closest name within the typo distance, or None.

    ``sure`` is False when the name is one edit beyond a sure typo: the planner asks.
    """
    if not names:
        return None
    best = process.extractOne(word, names, scorer=DamerauLevenshtein.distance)
    if best is None:
        return None
    name, edits = str(best[0]), int(best[1])
    length = max(len(word), len(name))
    allowed = sure_edits(length)
    score = 100.0 * (1 - edits / max(length, 1))
    if edits <= allowed:
        return name, score, True
    if edits == allowed + 1 and length >= 5 and score >= FLOOR:
        return name, score, False
    return None


_LANE_OF = re.compile(r"^trough", _FLAGS)


def _beside(text: str, found: Mention, m: re.Match[str]) -> bool:
    """A named labware right before the match, or right after it with "of" / "on" / "in"."""
    before = text[found.end : m.start()]
    after = text[m.end() : found.start]
    return (found.end <= m.start() and not before.strip()) or bool(
        found.start >= m.end() and re.fullmatch(r"\s+(?:of|on|in)\s+(?:the\s+)?", after, _FLAGS)
    )


_PLATE_LIKE = re.compile(
    r"\b((?:plate|plt|palte|pate|plat|reservoir|trough|rack|tiprack|tips?|tube|block|"
    r"source|dest|destination|src|dst|assay|sample|samples|pcr|deepwell)s?[_\- ]?\d+[a-z]?)\b"
    r"(?!\s*(?:u[lL]|µ[lL]|m[lL]|nl|microlit|millilit|c|°|deg\w*|x|min\w*|s|secs?|seconds?|"
    r"h|hrs?|hours?|rpm|nm)\b)",  # "Plate 50 uL", "on the shaker block 5 min"
    _FLAGS,
)


@dataclass(frozen=True, slots=True)
class Mention:
    """A name found in a clause: what it names, where, and how sure the match is."""

    name: str
    start: int
    end: int
    written: str = ""
    sure: bool = True


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _spaced(name: str) -> str:
    """A regex for a name however it is spaced: plate_1 ~ plate 1, plate-1, plate1."""
    parts = [re.escape(p) for p in re.split(r"[_\-\s]+", name) if p]
    return r"[\s_\-]?".join(parts)


# Where an id's words meet: "_", "-", a space, "PlateA" (a capital after a lower-case letter)
_ID_PARTS = re.compile(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])")


def _labware_alias(name: str) -> str:
    """A labware id however it is spaced, with the word "plate" where people add it:
    assay_a ~ "assay plate A", "assay_a plate"; elisa_b ~ "ELISA plate B"; PlateA ~ "plate A"."""
    parts = [re.escape(p) for p in re.split(_ID_PARTS, name) if p]
    sep = r"[\s_\-]?"
    forms = [sep.join(parts)]
    if len(parts) >= 2 and "plate" not in (p.lower() for p in parts):
        forms.append(sep.join(parts[:-1]) + r"\s+plate\s+" + parts[-1])
    return "(?:" + "|".join(forms) + r")(?:\s+plate\b)?"


@lru_cache(maxsize=256)
def _names_rx(
    names: tuple[str, ...], tag: str, plural: str, labware: bool = False
) -> re.Pattern[str] | None:
    """One regex for names however they are spaced (compiled once per set of names)."""
    if not names:
        return None
    spell = _labware_alias if labware else _spaced

    def one(n: str) -> str:
        if plural and len(n) > 3 and n[-1].lower() == "y" and n[-2].lower() not in "aeiou":
            return f"(?:{spell(n)}{plural}|{spell(n[:-1])}ies)"  # "library" -> "libraries"
        if plural and len(n) > 4 and n.lower().endswith("ium"):
            return f"(?:{spell(n)}{plural}|{spell(n[:-2])}a)"  # "medium" -> "media"
        if plural and len(n) > 4 and n.lower().endswith("um"):
            return f"(?:{spell(n)}{plural}|{spell(n[:-2])}a)"  # "serum" -> "sera"
        if plural and len(n) > 4 and n.lower().endswith("dia"):
            return f"(?:{spell(n)}|{spell(n[:-1])}um)"  # "media" -> "medium"
        if plural and len(n) > 5 and n.lower().endswith("ies"):
            return f"(?:{spell(n)}|{spell(n[:-3])}y)"  # "libraries" -> "each library"
        if plural and len(n) > 4 and n[-1] in "sS" and n[-2].lower() not in "su":
            return f"(?:{spell(n)}|{spell(n[:-1])})"  # "amplicons" -> "each amplicon"
        return f"{spell(n)}{plural}"

    alts = "|".join(f"(?P<{tag}{i}>{one(n)})" for i, n in enumerate(names))
    return re.compile(rf"(?<![\w])(?:{alts})(?![\w])", _FLAGS)


_BEFORE_GLOSS = re.compile(r"\s*[(\[]\s*(?:the\s+|my\s+|our\s+)?", re.IGNORECASE)
_AFTER_GLOSS = re.compile(
    r"[\w-]+\s*[(\[]\s*(?:(?:i\.e\.|aka|=)\s*)?(?:the\s+|my\s+|our\s+)?$", re.IGNORECASE
)


def _glossed(text: str, a: int, b: int, taken: list[tuple[int, int]]) -> bool:
    """A plate described in words right beside a lab id in brackets ("my PCR plate
    (amp_plate)", "amp_plate (the PCR plate)"): the id names it, the words only describe it."""
    after = _BEFORE_GLOSS.match(text, b)
    if after and any(start == after.end() for start, _ in taken):
        return True
    return any(end <= a and _AFTER_GLOSS.search(text[start:a]) for start, end in taken)


class Lexicon:
    """The names a request may use for one lab."""

    def __init__(self, lab: LabView) -> None:
        self.lab = lab
        self.labware = {lw.lower(): lw for lw in lab.labware}
        self.liquids = {n.lower(): n for n in lab.liquids()}  # lab view -> names, once
        self.instruments = {i.lower(): i for i in lab.instruments}

    @cached_property
    def _labware_rx(self) -> re.Pattern[str] | None:
        self._labware_order = sorted(self.lab.labware, key=len, reverse=True)
        return _names_rx(tuple(self._labware_order), "l", "", True)

    @cached_property
    def _liquid_rx(self) -> re.Pattern[str] | None:
        self._liquid_order = sorted(self.liquids.values(), key=len, reverse=True)
        return _names_rx(tuple(self._liquid_order), "q", "(?:e?s)?")

    @cached_property
    def _every_plate_well(self) -> re.Pattern[str] | None:
        return every_well_rx(tuple(self.lab.labware))

    # ------------------------------------------------------------------ words
    def fix_words(self, text: str) -> str:
        """``text`` with misspelt words of lab English corrected (lab names left alone); a
        short verb opening the clause is corrected too ("mxi" -> "mix")."""
        known = set(self.labware) | set(self.liquids) | set(self.instruments)
        if self._every_plate_well is not None:  # "every HEK12 well": every well of HEK12
            text = self._every_plate_well.sub(r"\1 \3 of \2", text)
        if any(re.search(r"\bstandards?\b", n, re.IGNORECASE) for n in self.liquids.values()):
            # "top std 200 uL", "stds in duplicate": the lab's standard, abbreviated
            text = re.sub(r"\bstd(s?)\b", r"standard\1", text, flags=re.IGNORECASE)
        first = re.match(r"[A-Za-z]{3,4}\b", text)
        if first and first.group(0).lower() not in _SHORT_VERBS:
            low = first.group(0).lower()
            near = [
                v
                for v in _SHORT_VERBS
                if len(v) == len(low) and DamerauLevenshtein.distance(low, v) == 1
            ]
            if len(near) == 1 and low not in known and sorted(low) == sorted(near[0]):
                text = near[0] + text[first.end() :]

        def fix(m: re.Match[str]) -> str:
            word = m.group(0)
            low = word.lower()
            if len(low) < 5 or low in VOCABULARY or low in NOT_TYPOS or low in known or "«" in word:
                return word
            if low.endswith("'s"):
                return word  # "lum_plate's first column": a possessive, never "plates"
            best = closest(low, _VOCAB_LIST)
            if best is None or not best[2] or best[0][:2] != low[:2]:
                return word
            if best[0].startswith(low) or low.startswith(best[0]):
                return word  # an inflection ("cycle", "plates"), not a typo
            return best[0]

        def fix_parts(m: re.Match[str]) -> str:
            fixed = fix(m)
            if fixed != m.group(0) or "-" not in fixed:
                return fixed
            # "chery-pick", "serail-dilute": each part of a hyphenated word on its own
            return "-".join(_WORD.sub(fix, part) for part in fixed.split("-"))

        return _WORD.sub(fix_parts, text)

    # ------------------------------------------------------------------ labware
    def labware_mentions(self, text: str) -> tuple[list[Mention], list[Mention]]:
        """(labware found, plate-like names that are not in this lab), in order."""
        found: list[Mention] = []
        rx = self._labware_rx
        if rx is not None:
            for m in rx.finditer(text):
                i = int(next(k for k, v in m.groupdict().items() if v is not None)[1:])
                found.append(Mention(self._labware_order[i], m.start(), m.end(), m.group(0)))
        taken = [(f.start, f.end) for f in found]
        plates = [lw for lw in self.lab.labware.values() if lw.kind == "plate"]
        said: list[str] | None = None  # the liquids named: "TMB from the reservoir"
        for name, a, b in described(text, plates, taken):  # "the 384 plate", "the sera plate"
            if ROLE_WORDS.search(text[a:b]):
                said = [m.name for m in self.liquid_mentions(text)] if said is None else said
                name = role_holder(name, plates, said) or ""
            if name and not _glossed(text, a, b, taken):
                found.append(Mention(name, a, b, text[a:b]))
        unknown: list[Mention] = []
        for m in _PLATE_LIKE.finditer(text):
            if any(a <= m.start() < b for a, b in taken):
                continue
            written = m.group(1)
            if _LANE_OF.match(written) and any(_beside(text, f, m) for f in found):
                continue  # "res_12 trough 2", "trough 3 of quad_res": a lane of a named trough
            low = re.sub(r"[\s\-]+", "_", written.lower())
            same_number = [n for n in self.labware if _digits(n) == _digits(low)]
            best = closest(low, same_number)
            if best is not None and not _glossed(text, m.start(), m.end(), taken):
                found.append(Mention(self.labware[best[0]], m.start(), m.end(), written, best[2]))
            else:
                unknown.append(Mention(written, m.start(), m.end(), written, False))
        found.sort(key=lambda f: f.start)
        return found, unknown

    # ------------------------------------------------------------------ liquids
    def liquid_mentions(self, text: str) -> list[Mention]:
        """Lab liquids named in ``text`` (spacing and plurals forgiven), in order."""
        rx = self._liquid_rx
        if rx is None:
            return []
        out = []
        for m in rx.finditer(text):
            i = int(next(k for k, v in m.groupdict().items() if v is not None)[1:])
            out.append(Mention(self._liquid_order[i], m.start(), m.end(), m.group(0)))
        taken = [(x.start, x.end) for x in out]
        for alias, rx in self._alias_rxs:  # "stop soln", "ddH2O", "master mix" for "2x SYBR ..."
            for m in rx.finditer(text):
                if not any(a < m.end() and m.start() < b for a, b in taken):
                    out.append(Mention(alias, m.start(), m.end(), m.group(0)))
                    taken.append((m.start(), m.end()))
        for name, a, b in by_word_mentions(text, self._by_word, taken):
            out.append(Mention(name, a, b, text[a:b]))  # "TMB": the lab's one "TMB substrate"
        # never the first half of a contraction: "Don't" is no short "donor plasma"
        out = sorted(
            (x for x in out if not re.match(r"['’]t\b", text[x.end :])), key=lambda x: x.start
        )
        roles = role_labels([(x.start, x.end) for x in out], text) if len(out) > 1 else set()
        return [x for i, x in enumerate(out) if i not in roles]  # ("diluent: PBS": PBS alone)

    @cached_property
    def _alias_rxs(self) -> list[tuple[str, re.Pattern[str]]]:
        """Each liquid whose name has words with short forms, and its regex, longest first;
        then the runs of words that stand for one longer name."""
        return list(alias_rxs(tuple(self.liquids.values())))

    @cached_property
    def _by_word(self) -> dict[str, str]:
        """A word of one multi-word liquid's name and of no other's ('TMB', 'conjugate')."""
        taken = frozenset(self.labware) | frozenset(self.instruments)
        return dict(by_word_of(tuple(self.liquids.values()), taken))  # a copy: never shared

    @staticmethod
    def named_by_word(word: str, liquids: Iterable[str]) -> list[str]:
        """The liquids ``word`` may name: for "medium" or "media" the culture media (YPD,
        SC-Ura, ...), else those with ``word`` as one of their words ("antibody")."""
        if re.fullmatch(r"(?:fresh\s+|the\s+)?medi(?:um|a)s?", word.strip(), _FLAGS):
            media = sorted(n for n in liquids if MEDIUM.search(n) and not CULTURE.search(n))
            if media:
                return media
        return [n for n in liquids if word.lower() in n.lower().split()]

    def fuzzy_liquids(self, text: str) -> list[Mention]:
        """Lab liquids of two or more words written with a typo ("blockng buffer")."""
        out: list[Mention] = []
        words = list(re.finditer(r"[A-Za-z][\w%-]*", text))
        ascii_text = text.isascii()  # then lower() keeps every length
        for name in self.liquids.values():
            parts = name.split()
            n = len(parts)
            if n < 2 or len(words) < n:
                continue
            low_name, digits = name.lower(), _digits(name)
            first_word, last_start = parts[0].lower(), parts[-1].lower()[:2]
            for i in range(len(words) - n + 1):
                a, b = words[i].start(), words[i + n - 1].end()
                size = b - a if ascii_text else len(text[a:b].lower())
                if abs(size - len(low_name)) > sure_edits(max(size, len(low_name))):
                    continue  # more edits than a sure typo has (each edit changes the length
                    # by one at most): no need to count them
                written = text[a:b]
                low = written.lower()
                if low == low_name or _digits(written) != digits:
                    continue  # exact: the regex found it; "mix 2 times" is not "mix 10 times"
                said = written.split()
                if said[-1].lower()[:2] != last_start:
                    continue
                first = closest(said[0].lower(), [first_word])
                if first is None or not first[2]:
                    continue  # "blocking buffer" is no typo of "sample buffer"
                best = closest(low, [low_name])
                if best is not None and best[2]:
                    out.append(Mention(name, a, b, written, True))
        return out

    def liquid(self, written: str) -> Mention | None:
        """The lab liquid a written name means: exact, spaced, plural, or a close typo."""
        low = re.sub(r"[\s\-]+", "_", written.strip().lower())
        ies = low[:-3] + "y" if low.endswith("ies") else low  # "libraries", "assemblies"
        for cand in (low, low.rstrip("s"), low.removesuffix("es"), ies):
            if cand in self.liquids:
                return Mention(self.liquids[cand], 0, 0, written)
        spaced = {re.sub(r"[\s\-]+", "_", k): v for k, v in self.liquids.items()}
        if low in spaced:
            return Mention(spaced[low], 0, 0, written)
        best = closest(low, list(spaced))
        if best is None:
            typo = misspelt(low, list(spaced), self._by_word)
            return Mention(spaced.get(typo, typo), 0, 0, written) if typo else None
        edits = [DamerauLevenshtein.distance(low, k) for k in spaced]
        tie = edits.count(min(edits)) > 1  # "buffer" for "Buffer A" and "Buffer B": asked
        return Mention(spaced[best[0]], 0, 0, written, best[2] and not tie)

    # ------------------------------------------------------------------ instruments
    def instrument_mentions(self, text: str) -> list[tuple[str, str, int, int]]:
        """(kind, instrument id or '', start, end) for every instrument word in ``text``."""
        out: list[tuple[str, str, int, int]] = []
        by_id, by_base = instrument_rxs(tuple(self.lab.instruments))
        for iid, rx in by_id:
            for m in rx.finditer(text):
                out.append((self.lab.instruments[iid].kind, iid, m.start(), m.end()))
        for iid, rx in by_base:  # "the ODTC" for odtc1, "TC" for tc1
            for m in rx.finditer(text):
                if not any(a <= m.start() < b for _, _, a, b in out):
                    out.append((self.lab.instruments[iid].kind, iid, m.start(), m.end()))
        for kind, rx in instrument_word_rxs() if any_instrument_word().search(text) else ():
            for m in rx.finditer(text):
                if any(a <= m.start() < b or m.start() <= a < m.end() for _, _, a, b in out):
                    continue
                out.append((kind, "", m.start(), m.end()))
        return sorted(out, key=lambda t: t[2])
