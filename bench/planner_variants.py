"""How steady the planner is under rewordings that keep a request's meaning.

    python bench/planner_variants.py                 # per rewording: entries still right
    python bench/planner_variants.py --show 40       # and the first 40 that broke, with why

Every development entry the planner gets right is rewritten in each way below that applies to
it (units spelt another way, well ranges written another way, lower-case wells, degrees and
minutes written out, a greeting around it, a step label before it, "then" as a new sentence or
a numbered or bulleted list, a misspelt verb, "50 uL each" as "50 uL per well" and back,
"wells" before a range), and the rewritten request is judged against the same
entry: a rewording that keeps the meaning must keep the outcome and every fact. A rewording
that breaks an entry points at a stage that only knows some of the ways people write. Only
the development part is read; text in quotes (liquid names) is never rewritten.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.task.planning.rules import RulePlanner
from evals.planning import Entry, Labs, judge, load_entries

# quoted names as people quote them (a straight single quote only when it is no apostrophe)
_QUOTED = re.compile(
    r"(\"[^\"\n]*\"|“[^”\n]*”|„[^“”\n]*[“”]|‚[^‘’\n]*[‘’]|‘[^’\n]*’|«[^»\n]*»|`[^`\n]*`"
    r"|(?<![\w'])'[^'\n]+'(?![\w']))"
)
_VOL = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:uL|ul|µl|µL|μl|μL)\b")
_WELL = r"([A-Pa-p])(\d{1,2})"
_RANGE = re.compile(rf"\b{_WELL}(?::|-|–|\.\.(?!\.)|\s+through\s+|\s+thru\s+){_WELL}\b")
# a volume at the end of a list ("10, 20 and 30 uL") is not rewritten: the unit covers the list
_LISTED = re.compile(r"\d\s*(?:,|/|;|&|\band\b|\bor\b)\s*$")
_DEG = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:°\s*C|C|deg C|degrees C)\b(?!\d)")
_MIN = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:min|mins|minutes)\b")
_THEN = re.compile(r"(?:,|;)?\s+(?:and\s+)?then\s+", re.I)
_TYPOS = {
    "transfer": "trasnfer",
    "dispense": "dipsense",
    "pipette": "pipete",
    "aliquot": "alliquot",
    "distribute": "distrubute",
    "incubate": "incubtae",
    "dilution": "diltuion",
    "absorbance": "absorbence",
}


def _outside_quotes(fn: Callable[[str], str]) -> Callable[[str], str]:
    """``fn`` on the text with its quoted names held aside (as «0», «1», ...), so that a
    rewording that splits or joins the text never splits a name or reads inside one."""

    def apply(text: str) -> str:
        held: list[str] = []

        def hold(m: re.Match[str]) -> str:
            held.append(m[0])
            return f"\x00{len(held) - 1}\x00"

        out = fn(_QUOTED.sub(hold, text))
        return re.sub(r"\x00(\d+)\x00", lambda m: held[int(m[1])], out)

    return apply


def _volumes(unit: Callable[[float], str]) -> Callable[[str], str]:
    def rewrite(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            if _LISTED.search(text[max(0, m.start() - 12) : m.start()]):
                return m[0]
            return unit(float(m[1]))

        return _VOL.sub(one, text)

    return _outside_quotes(rewrite)


def _range(sep: str) -> Callable[[str], str]:
    return lambda t: _RANGE.sub(lambda m: f"{m[1]}{m[2]}{sep}{m[3]}{m[4]}", t)


def _one_line(fn: Callable[[str], str]) -> Callable[[str], str]:
    return lambda t: t if "\n" in t.strip() else fn(t.strip())


# A request that already opens with a greeting or a list number, or ends with thanks or a
# name: wrapping it again would say it twice ("Many thanks, Sam Thanks!", "Step 1 - 1. add").
_WRAPPED = re.compile(
    r"^\s*(?:hi|hey|hello|good\s+\w+|morning|\d{1,2}[.)]\s)|(?:thanks?|cheers|ta|regards)"
    r"(?:,?\s+[A-Z][a-z]+)?[\s!.]*$",
    re.IGNORECASE,
)


def _unwrapped(fn: Callable[[str], str]) -> Callable[[str], str]:
    return lambda t: t if _WRAPPED.search(t.strip()) else fn(t)


# a molar unit keeps its case: "4 nM" is a concentration, "4 nm" a wavelength
_MOLAR = re.compile(r"(?<=\d)(\s*[nmuµμp]?M)\b")


def _lower(text: str) -> str:
    parts = _MOLAR.split(text)
    return "".join(p if i % 2 else p.lower() for i, p in enumerate(parts))


# "D8 into A2" written "D8 to A2" reads as the range D8..A2: a well to a well keeps its "into"
_WELL_INTO_WELL = re.compile(
    rf"(?<=\b[A-Pa-p]\d)\s+into(?=\s+{_WELL}\b)|(?<=\b[A-Pa-p]\d\d)\s+into(?=\s+{_WELL}\b)"
)


def _into_as_to(text: str) -> str:
    kept = {m.start() for m in _WELL_INTO_WELL.finditer(text)}
    return re.sub(r"\s+into\b", lambda m: m[0] if m.start() in kept else " to", text)


def _then_as(joiner: str) -> Callable[[str], str]:
    """'..., then ...' joined another way (a "then" after a full stop is left as it is)."""

    def rewrite(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            return m[0] if text[: m.start()].endswith((".", "!", "?")) else joiner

        return _THEN.sub(one, text)

    return rewrite


def _numbered(text: str) -> str:
    if "\n" in text.strip():
        return text
    parts = [p.strip().rstrip(".") for p in _THEN.split(text.strip()) if p.strip()]
    if len(parts) < 2:
        return text
    return "\n".join(f"{i}. {p[0].upper()}{p[1:]}" for i, p in enumerate(parts, 1))


def _bulleted(text: str) -> str:
    numbered = _numbered(text)
    return re.sub(r"(?m)^\d+\. ", "- ", numbered) if numbered != text else text


# "50 uL each" <-> "50 uL per well" (not "each step", "each time": those are not wells)
_EACH = re.compile(r"(\d\s*uL)\s+each\b(?!\s+(?:step|time|transfer|round|cycle|way|of|well)\b)")
_PER_WELL = re.compile(r"(\d\s*uL)\s+per\s+well\b")


def _each_per_well(text: str) -> str:
    swapped = _EACH.sub(r"\1 per well", text)
    return swapped if swapped != text else _PER_WELL.sub(r"\1 each", text)


# "to A1-A6" -> "to wells A1-A6" (not inside a chain "A1 to B1 to C1")
_BARE_RANGE = re.compile(
    r"(?<!\b[A-Pa-p]\d )(?<!\b[A-Pa-p]\d\d )\b(?P<w>to|into|in|from) "
    rf"(?={_WELL}(?:-|:|–| to | through ){_WELL}\b(?! to | ->))"
)


def _typo(text: str) -> str:
    for word, typo in _TYPOS.items():
        new = re.sub(rf"\b{word}\b", typo, text, count=1, flags=re.I)
        if new != text:
            return new
    return text


VARIANTS: dict[str, Callable[[str], str]] = {
    "unit µl": _volumes(lambda v: f"{v:g} µl"),
    "unit μL (Greek mu)": _volumes(lambda v: f"{v:g} μL"),
    "unit uL glued": _volumes(lambda v: f"{v:g}uL"),
    "unit microlitres": _volumes(lambda v: f"{v:g} microlitres"),
    "unit mL": _volumes(lambda v: f"{v / 1000:g} mL"),
    "range colon": _outside_quotes(_range(":")),
    "range dash": _outside_quotes(_range("-")),
    "range en dash": _outside_quotes(_range("–")),
    "range through": _outside_quotes(_range(" through ")),
    "wells lower-case": _outside_quotes(
        lambda t: re.sub(rf"\b{_WELL}\b", lambda m: m[0].lower(), t)
    ),
    "degrees °C": _outside_quotes(lambda t: _DEG.sub(r"\1 °C", t)),
    "degrees spelt": _outside_quotes(lambda t: _DEG.sub(r"\1 degrees C", t)),
    "minutes spelt": _outside_quotes(lambda t: _MIN.sub(r"\1 minutes", t)),
    "all lower-case": _outside_quotes(_lower),
    "ids with a space": _outside_quotes(lambda t: re.sub(r"\b([A-Za-z]+)_(\d+)\b", r"\1 \2", t)),
    "into as to": _outside_quotes(_into_as_to),
    "no 'the'": _outside_quotes(lambda t: re.sub(r"\bthe\s+", "", t, flags=re.I)),
    "greeting around": _one_line(_unwrapped(lambda t: f"Hi! {t} Thanks!")),
    "context before": _one_line(_unwrapped(lambda t: f"For my assay tomorrow: {t}")),
    "step label": _one_line(_unwrapped(lambda t: f"Step 1 - {t}")),
    "then as sentence": _outside_quotes(_then_as(". Then ")),
    "then as semicolon": _outside_quotes(_then_as("; then ")),
    "numbered list": _outside_quotes(_numbered),
    "misspelt verb": _outside_quotes(_typo),
    "bulleted list": _outside_quotes(_bulleted),
    "each as per well": _outside_quotes(_each_per_well),
    "'wells' before range": _outside_quotes(lambda t: _BARE_RANGE.sub(r"\g<w> wells ", t)),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=0, help="print the first N that broke")
    parser.add_argument("--only", help="run only the rewordings whose name contains this")
    args = parser.parse_args()
    labs, planner = Labs(), RulePlanner()
    entries = [e for e in load_entries("dev")]
    base_ok: list[Entry] = []
    for entry in entries:
        verdict = judge(entry, planner.plan(entry.request, labs[entry.lab].view), labs[entry.lab])
        if verdict.outcome_ok and verdict.facts_ok is not False:
            base_ok.append(entry)
    tried: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    shown = 0
    for name, rewrite in VARIANTS.items():
        if args.only and args.only not in name:
            continue
        for entry in base_ok:
            text = rewrite(entry.request)
            if text == entry.request:
                continue
            lab = labs[entry.lab]
            variant = Entry(**{**entry.__dict__, "request": text})
            result = planner.plan(text, lab.view)
            verdict = judge(variant, result, lab)
            tried[name] += 1
            if verdict.outcome_ok and verdict.facts_ok is not False:
                kept[name] += 1
            elif shown < args.show:
                shown += 1
                print(f"BROKE [{name}] {entry.id}: {text!r}")
                for problem in verdict.problems[:2]:
                    print(f"     {problem}")
    print(f"\nplanner under rewordings (dev part, {len(base_ok)} entries right as written)")
    print(f"{'rewording':<22}{'tried':>7}{'still right':>13}")
    for name in VARIANTS:
        if tried[name]:
            print(f"{name:<22}{tried[name]:>7}{100 * kept[name] / tried[name]:>12.1f}%")
    total, right = sum(tried.values()), sum(kept.values())
    print(f"{'ALL':<22}{total:>7}{100 * right / max(total, 1):>12.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
