"""A thermocycling programme read from lab English: stages of steps, each stage repeated.

People write a programme many ways: "35 cycles of 95 C for 15 s, 60 C for 30 s", "30x (98/10s,
62/20s)", "35x[98/10s, 60/30s]", "(95 C 30 s, 55 C 30 s) x 30", "cycle it 25 times through
...", "denature 3 min at 98", a bulleted or numbered list with one part a line, "initial" and
"final" parts told before or after the cycles. The text is read as tokens in order:

- a step: a temperature held for a time ("95 C for 15 s", "95c 3min", "98/10s", "3 min at 98",
  "95 degrees 30 seconds");
- a count: it repeats the steps right after it ("30x (", "35 cycles of", "cycle it 25 times
  through", "40 cycles:") or else the steps just before it ("(...) x 30", "... 35 times");
- a boundary (";", a new line, ".", "then", "followed by", "final", "initial", "after") ends a
  part, and a bracket opened after a count ends at its closing bracket;
- the heated lid ("heated lid 105 C", "lid at 110 C"), a final hold ("hold at 4 C", "4 C
  forever", "4/inf", "keep it at 4 C", "4 C hold") or "no hold".

A count the text does not give as a number ("repeat", "x a few") is kept as ``vague`` so the
planner asks for it; nothing is guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from agents.task.planning._quantities import WORD_NUMBERS
from agents.task.planning.families._stages import (
    _DELTA,
    Stage,
    _after_its_step,
    _delta,
    group,
    pcr_shaped,
)

_FLAGS = re.IGNORECASE
_N = r"\d+(?:\.\d+)?"
_WORD = "|".join(sorted((re.escape(w) for w in WORD_NUMBERS), key=len, reverse=True))
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}  # fmt: skip
_ONES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9}  # fmt: skip
_COMPOUND = rf"(?:{'|'.join(_TENS)})[\s-](?:{'|'.join(_ONES)})"
COUNT_N = rf"(?:\d+|{_COMPOUND}|{_WORD})"
_CYCLING = re.compile(r"\bcycl(?:e|es|ing)\b|\brepeat|\bpcr\b|\bamplif", _FLAGS)
_DEG = r"(?:\s*[°º]?\s*(?:c\b|degrees?(?:\s*c\b)?|deg(?:\s*c)?\b|celsius\b))"
_DUR = (
    rf"(?:(?P<d>{_N}|{_COMPOUND}|{_WORD}|half\s+an?|an?)\s*-?\s*(?P<u>seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h)\b"
    r"(?:\s*(?P<d2>\d+)\s*(?:seconds?|secs?|s)\b)?"
    r"|(?P<mm>\d{1,2}):(?P<ss>[0-5]\d)\b(?:\s*(?:min|mins|minutes)\b)?)"  # "0:30", "2:00 min"
)


def _named(pattern: str, suffix: str) -> str:
    return re.sub(r"\?P<(\w+)>", lambda m: f"?P<{m.group(1)}{suffix}>", pattern)


_STEP = re.compile(
    rf"(?P<t>-?{_N}){_DEG}\s*(?:for|during|,|:|-|–|held\s+for|hold(?:ing)?(?:\s+for)?)?\s*\(?\s*{_DUR}"
    rf"|(?P<tb>-?{_N})\s*(?:c\s*)?/\s*{_named(_DUR, 'b')}"
    rf"|{_named(_DUR, 'a')}\s*(?:at|@)\s*(?P<ta>-?{_N}){_DEG}?"
    rf"|\b(?:at|@)\s*(?P<tx>-?{_N})\s+for\s+{_named(_DUR, 'x')}",
    _FLAGS,
)
_TEMP = re.compile(rf"(?<![\w.])(?P<t>-?{_N}){_DEG}", _FLAGS)
# "3 min 95, 40 cycles of 10 s 95 and 30 s 60": each step its time first (a bare number only
# in a programme's text, and only where a list or the text ends after it)
_TIME_FIRST = re.compile(
    rf"{_named(_DUR, 'f')}\s*(?:at\s+|@\s*)?(?P<tf>-?{_N})"
    rf"(?:(?P<deg>{_DEG})|(?=\s*(?:,|;|\+|/|\)|\]|\band\b|\bthen\b|$)))",
    _FLAGS,
)
# Notebook shorthand in a programme: "95 3 min, 35x 95 15s 60 30s" - a number held for a time.
_BARE_STEP = re.compile(
    rf"(?<![\w.:/×-])(?P<tn>\d{{1,2}}(?:\.\d)?)\s+(?:for\s+)?{_named(_DUR, 'n')}", _FLAGS
)  # ("PCR: 95 for 2 min, 35 cycles of 95 for 20 s, ...")
_PROGRAMME_WORDS = re.compile(
    r"thermo|cycl|\bpcr\b|\b\d+\s*x\b|\bx\s*\d|\blid\b|denatur|anneal", _FLAGS
)
COLD_HOLD_C = 15.0  # a last temperature without a time at or below this is the final hold
_LID = re.compile(
    rf"\b(?:heated\s+)?lid\b(?:\s+(?:at|to|of|temperature|temp|heated\s+to|on|set\s+to))*"
    rf"\s*:?\s*(?P<c>{_N}){_DEG}?|(?P<c2>{_N}){_DEG}\s+(?:heated\s+)?lid\b",
    _FLAGS,
)
_HOLD = re.compile(
    r"\b(?:(?:hold|keep|store|cool|leave|chill|park|held|kept|left)\w*"
    r"|(?:end|finish)(?:s|es|ing)?(?:\s+(?:up|off))?(?=\s+(?:at|on|in|with)\b))\b"  # "end at 4"
    r"(?:\s+(?:it|them|the\s+plate|the\s+block|\w+_\w+|at|on|in|to|down\s+to|the\s+block\s+at"
    r"|the\s+(?:thermo)?cycler|the\s+pcr\s+machine))*"
    rf"\s*[:=@]?\s+(?P<c>-?{_N}){_DEG}?(?!(?:{_DEG})?\s*(?:/|{_N}|for\b))"
    rf"|(?P<c2>-?{_N}){_DEG}?\s*(?:/\s*|-\s*|[(\[]\s*|,\s*)?(?:hold\b|forever\b|indefinitely\b|inf(?:inity)?\b|∞"
    r"|until\b|hold\s+forever\b)(?!\s*(?:@|at\b)\s*-?\d)"
    rf"|(?:∞|\bforever\b|\bindefinitely\b|\binf(?:inity)?\b)\s*(?:@|at\b)\s*(?P<c3>-?{_N}){_DEG}?",
    _FLAGS,
)  # (the last: "∞ @ 4 C", "forever at 4 C": the hold told time first)
NO_HOLD = re.compile(r"\bno\s+(?:final\s+)?hold\b|\bwithout\s+(?:a\s+)?(?:final\s+)?hold\b", _FLAGS)
_LEAD = re.compile(
    rf"\b(?P<n>{COUNT_N})\s*(?:x|×)\s*:?(?=\s*[(\[]|\s*\d)"
    rf"|\b(?P<m>{COUNT_N})\s*-?\s*(?:cycles?|cyles?|cylces?|rounds?|repeats?|times)"
    r"(?:\s+(?:in\s+)?total)?"
    r"\s*(?:(?:consisting\s+)?of\b\s*:?|:|through\b|over\b|with\b|at\b|between\b|-|[x×]|as\s+follows\s*:?"
    r"|(?:on|in|for)\s+(?:the\s+)?[\w-]+(?:\s+plate)?\s*:)?"  # "40 cycles on qpcr_a: 95 C ..."
    r"(?:\s*(?:denatur\w*|melt\w*|anneal\w*|exten\w*|elongat\w*)(?:\s+(?:at|for))?\s*:?)?"
    r"(?=\s*(?:[(\[](?=[^)\]]*\d)|-?\d))"  # (a bracket of steps: "40 times (qpcr_a)" is none)
    rf"|(?<=[(\[])\s*(?P<k>{COUNT_N})\s*-?\s*(?:x|×|cycles?|rounds?|repeats?|times)\s*[)\]]\s*:"
    r"|(?<![)\]])(?<![)\]]\s)(?:\bx|×)\s*(?P<p>\d{1,3})\s*:?(?=\s*[(\[])",  # "x35 [95 C 15 s, ...]"
    _FLAGS,
)  # "Stage 2 (40 cycles): 95 C 15 s, ...": the count heads the steps after it
_LEAD_COMMA = re.compile(
    rf"\b(?P<m>{COUNT_N})\s*(?:cycles?|rounds?|times|x)\s*,(?=\s*-?\d)", _FLAGS
)
_THESE = re.compile(
    r"\b(?:do|repeat|run|cycle)\s+(?:this|these|that|those|them|all|both|the\s+above|it\s+all)"
    r"(?:\s+(?:two|three|four))?(?:\s+steps?)?\s*(?:for\s+)?$",
    _FLAGS,
)
_TRAIL = re.compile(
    rf"(?:x|×)\s*(?P<n>{COUNT_N})\b|\b(?:for\s+)?(?P<m>{COUNT_N})\s*(?:x\b|×|"
    r"(?:cycles?|cyles?|rounds?|times)\b)"
    r"|\b(?:cycle\s+(?:number|count|no\.?)|(?:number|no\.?)\s+of\s+cycles|#\s*(?:of\s+)?cycles"
    r"|cycles)\s*[:=]?\s*(?P<k>\d{1,3})\b(?!\s*(?:°|c\b|deg|/))",  # "cycle number 40", "cycles: 40"
    _FLAGS,
)
_FEW = (
    r"a\s+few|several|some|many|multiple|a\s+couple(?:\s+of)?|a\s+bunch(?:\s+of)?|lots(?:\s+of)?"
    r"|a\s+number\s+of|enough|as\s+many\s+as\s+needed|a\s+handful(?:\s+of)?"
)
_VAGUE = re.compile(
    rf"(?:x|×)\s*(?:{_FEW})\b|\b(?:{_FEW})\s+(?:of\s+)?(?:cycles|times|rounds|repeats)\b"
    rf"|\brepeat\b(?![^,;.]*?\b{COUNT_N}\s*(?:times|x|cycles)\b)"
    rf"(?!\s*(?:it\s+|that\s+|this\s+)?{COUNT_N}\b)",
    _FLAGS,
)
CYCLED = re.compile(
    r"\b(?:cycles?|cyles?|rounds?)\b|\brepeat|\d+\s*x\s*[(\[]|[)\]]\s*(?:x|×)\s*\d+|(?:\bx|×)\s*\d+\b"
    r"|\b\d+\s*x\s+\d",
    _FLAGS,
)
# "30 times between ... after a 95 C 5 min hot start": what comes after "after a" runs first
_AFTER_A = (
    r"after\s+(?:(?:an?|the|one)\s+(?!(?:[\w-]+\s+){0,2}(?:cycl|pcr|run|program|reaction|last|final))"
    r"|(?=-?\d+(?:\.\d+)?\s*(?:C|min|s|h)\b))"  # "(after 95 C 10 min)": that step runs first
)
_BOUNDARY = re.compile(
    r";|\n|\||\.(?=\s|$)|\b(?:then|followed\s+by|preceded\s+by|"
    rf"{_AFTER_A}|after(?:wards)?|final(?:ly)?|initial(?:ly)?|first|"
    r"last|end(?:ing)?\s+with|finish(?:ing)?\s+(?:off\s+)?with|at\s+the\s+end)\b",
    _FLAGS,
)
_BEFORE = re.compile(
    rf"\b(?:initial(?:ly)?|first|before\s+the\s+cycl\w*|pre-?|preceded\s+by|{_AFTER_A})", _FLAGS
)
_NAMES = re.compile(r"denatur|anneal|exten|elongat|melt", _FLAGS)
_NAMING = re.compile(r"\b(?:temp(?:erature)?|ta|tm)\s*(?:of|=|:|is|at)?\s*$", _FLAGS)
_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "hour": 3600}


@dataclass
class Profile:
    stages: list[Stage]
    lid_c: float | None = None
    hold_c: float | None = None
    no_hold: bool = False
    vague: str | None = None  # a count not given as a number ("repeat", "x a few")
    untimed: list[float] = field(default_factory=list)  # temperatures said without a time


def count_value(word: str) -> float:
    """A number written in digits or words ('35', 'thirty', 'thirty-five')."""
    w = re.sub(r"\s+", " ", word.lower())
    if w in ("a", "an"):
        return 1.0  # "for a minute"
    if w in ("half a", "half an"):
        return 0.5
    if w in WORD_NUMBERS:
        return float(WORD_NUMBERS[w])
    tens, _, ones = w.replace("-", " ").partition(" ")
    if tens in _TENS and ones in _ONES:
        return float(_TENS[tens] + _ONES[ones])
    return float(word)


def count(word: str) -> int:
    return int(count_value(word))


def _seconds(value: str, unit: str, extra: str | None) -> float:
    u = unit.lower().rstrip("s") or "s"
    scale = next((v for k, v in _SECONDS.items() if u.startswith(k)), 1)
    if u in ("m", "min", "minute"):
        scale = 60
    return count_value(value) * scale + (float(extra) if extra else 0.0)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    for a, b in spans:
        text = text[:a] + " " * (b - a) + text[b:]
    return text


def steps(text: str, programme: bool = False) -> list[tuple[int, int, float, float]]:
    """(start, end, C, s) of every temperature held for a time in ``text``; bare numbers held
    for a time ("95 3 min") count in a programme's text (``programme``: known to be one)."""
    return list(_steps(text, programme))  # several stages ask of one clause: read it once


@lru_cache(maxsize=1024)
def _steps(text: str, programme: bool) -> tuple[tuple[int, int, float, float], ...]:
    out = []
    for m in _STEP.finditer(text):
        g = m.groupdict()
        k = next(k for k in ("", "b", "a", "x") if g[f"t{k}"] is not None)
        if g[f"mm{k}"] is not None:
            s = float(g[f"mm{k}"]) * 60 + float(g[f"ss{k}"])
        else:
            s = _seconds(g[f"d{k}"], g[f"u{k}"], g[f"d2{k}"])
        c = float(g[f"t{k}"])
        out.append((m.start(), m.end(), c, s))
    programme = programme or bool(_PROGRAMME_WORDS.search(text))
    first = [
        (m.start(), m.end(), float(m["tf"]), _seconds(m["df"], m["uf"], m["d2f"]))
        for m in _TIME_FIRST.finditer(text)
        if m["df"] and (m["deg"] or (programme and 4 <= float(m["tf"]) <= 99))
    ]
    if first and first[0][0] < min((a for a, *_ in out), default=len(text)):
        return tuple(first)  # written time first from the start: every step is read that way
    if programme:
        for m in _BARE_STEP.finditer(text):
            if 4 <= float(m["tn"]) <= 99 and not any(
                a < m.end() and m.start() < b for a, b, *_ in out
            ):
                s = (
                    _seconds(m["dn"], m["un"], m["d2n"])
                    if m["dn"]
                    else 60 * float(m["mmn"]) + float(m["ssn"])
                )
                out.append((m.start(), m.end(), float(m["tn"]), s))
    return tuple(sorted(out))


def hold_of(text: str) -> float | None:
    m = _HOLD.search(text)
    return float(m["c"] or m["c2"] or m["c3"]) if m else None


def lid_of(text: str) -> float | None:
    """The lid temperature ``text`` sets, as :func:`parse` reads it (without the rest)."""
    lid = _LID.search(_blank(text, [m.span() for m in _DELTA.finditer(text)]))
    return float(lid.group("c") or lid.group("c2")) if lid else None


def parse(text: str) -> Profile:
    """The programme ``text`` describes (no stages: no programme here)."""
    prof = Profile([])
    segs = text.split("|")
    if (
        len(segs) > 1
        and _LEAD.search(segs[0])  # "25 cycles: 95 C 20 s | 60 C 20 s": the count's steps
        and all(len(steps(_BOUNDARY.split(seg)[0], True)) <= 1 for seg in segs)
        and not any(_LEAD.search(seg) or _HOLD.search(seg) for seg in segs[1:])
    ):  # (never "95 C 3 min | 40 cycles ... | 4 C hold": those are the programme's parts)
        text = text.replace("|", ",")
    deltas = [(m.start(), _delta(m)) for m in _DELTA.finditer(text)]
    text = _blank(text, [m.span() for m in _DELTA.finditer(text)])  # "-1 C" is no step
    lid = _LID.search(text)
    if lid:
        prof.lid_c = float(lid.group("c") or lid.group("c2"))
        text = _blank(text, [lid.span()])
    holds = list(_HOLD.finditer(text))
    if holds:
        prof.hold_c = float(holds[-1]["c"] or holds[-1]["c2"] or holds[-1]["c3"])
        text = _blank(text, [h.span() for h in holds])
    prof.no_hold = bool(NO_HOLD.search(text))
    vague = _VAGUE.search(text)
    prof.vague = vague.group(0) if vague else None
    tokens: list[tuple[int, str, object]] = [(a, "delta", d) for a, d in deltas]
    found = steps(text, programme=True)
    tokens += [(a, "step", (c, s)) for a, _, c, s in found]
    covered = [(a, b) for a, b, _, _ in found]

    def free(pos: int) -> bool:
        return not any(a <= pos < b for a, b in covered)

    untimed = [(m.start(), float(m.group("t"))) for m in _TEMP.finditer(text) if free(m.start())]
    last_step = max((a for a, _ in covered), default=-1)
    if (
        untimed
        and prof.hold_c is None
        and untimed[-1][0] > last_step
        and untimed[-1][1] <= COLD_HOLD_C
    ):
        prof.hold_c = untimed.pop()[1]  # "..., 72 C 5 min, then 4 C"
    timed = {c for *_, c, _ in found}
    untimed = [  # "with an annealing temperature of 58 C: ..., 58 C 30 s": said again, no step
        (a, c) for a, c in untimed if not (c in timed and _NAMING.search(text[max(0, a - 30) : a]))
    ]
    prof.untimed = [c for _, c in untimed]
    leads = [m for m in _LEAD.finditer(text) if free(m.start())]
    tokens += [
        (
            m.start(),
            "lead",
            (count(m["n"] or m["m"] or m["k"] or m["p"]), _NAMES.search(m[0])),
        )
        for m in leads
    ]
    for m in _LEAD_COMMA.finditer(text):  # "2-step: 40 cycles, 95 C 15 s, 60 C 1 min"
        if free(m.start()) and not any(a <= m.start() < b for a, b in (x.span() for x in leads)):
            tokens.append((m.start(), "lead_comma", count(m["m"])))
            leads.append(m)
    lead_spans = [m.span() for m in leads]
    for m in _TRAIL.finditer(text):
        if free(m.start()) and not any(a <= m.start() < b for a, b in lead_spans):
            n = count(m.group("n") or m.group("m") or m["k"])
            these = bool(_THESE.search(text[max(0, m.start() - 40) : m.start()]))
            tokens.append((m.start(), "trail_these" if these else "trail", n))
    for m in _BOUNDARY.finditer(text):
        if free(m.start()):
            kind = "before" if _BEFORE.match(text, m.start()) else "boundary"
            if kind == "before" and _after_its_step(text, m, covered):
                kind = "was_before"  # "94 C 2 min initial": the step just told runs first
            tokens.append((m.start(), kind, m.group(0)))
    for m in re.finditer(r"[(\[]|[)\]]", text):
        if free(m.start()):
            tokens.append((m.start(), "open" if m.group(0) in "([" else "close", None))
    for m in re.finditer(r"[,/]", text):
        if free(m.start()):
            tokens.append((m.start(), "sep", m.group(0)))
    tokens.sort(key=lambda t: (t[0], t[1] != "lead"))
    prof.stages = group(tokens)
    if (
        prof.vague is None
        and (_CYCLING.search(text) or pcr_shaped(prof.stages))
        and all(st.repeats == 1 and not st.cycle_of_touchdown for st in prof.stages)
        and any(len(st.steps) > 1 for st in prof.stages)
        and not _one_count_said(text, prof.stages)
    ):
        prof.vague = "no number of cycles"  # "cycle rxn_plate 95 C 15 s / 60 C 30 s"
    return prof


# A count of cycles said anywhere ("a 35-cycle PCR", "PCR (35 cycles) on ...", "cycles: 35",
# "35 PCR cycles"), apart from the steps it repeats
_SAID_COUNT = re.compile(
    rf"\b(?P<n>{COUNT_N})\s*-?\s*(?:(?:pcr|thermal|amplification)\s+)?(?:cycles?|cyles?|rounds?)\b"
    r"|\bcycles?\s*[:=]\s*(?P<k>\d{1,3})\b",
    _FLAGS,
)


def _one_count_said(text: str, stages: list[Stage]) -> bool:
    """A programme whose one count is said apart from its steps ("Run a 35-cycle PCR: 95 C 3
    min, then 95 C 15 s, 60 C 30 s, 72 C 1 min, then 72 C 5 min"): when it has exactly one part
    of several steps, that part is what the count repeats (set here); else it is asked."""
    counts = {count(m["n"] or m["k"]) for m in _SAID_COUNT.finditer(text)}
    several = [st for st in stages if len(st.steps) > 1]
    if len(counts) != 1 or len(several) != 1 or min(counts) < 2:
        return False
    several[0].repeats = counts.pop()
    return True
