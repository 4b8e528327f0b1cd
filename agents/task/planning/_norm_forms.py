"""Normalisations filled in as a form: a line that says the normalisation ("Normalisation",
"Normalise extracts A1-C1 to 4 ng/uL", "Task: normalise"), then a field a line ("- samples:
extracts A1-C1", "Concs (ng/uL): 20, 40, 80", "target: 4 ng/uL", "final vol: 40 uL",
"diluent: low-TE", "destination: norm_out A1-C1"). The form becomes the one sentence the
normalisation reads: "Normalise extracts A1-C1 (20, 40, 80 ng/uL) to 4 ng/uL, 40 uL final,
into norm_out A1-C1, with low-TE". Anything else is left as it was written.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_SAYS = re.compile(r"normali[sz]|\bnorm\b|dilut", _FLAGS)
_BULLET = r"^\s*(?:[-*+•·▪]\s*|\d+[.)]\s+)?"
# the form's fields, by what they give; a key may carry the unit in brackets ("Conc (nM)")
_KEYS = (
    ("conc", r"(?:sample\s+|stock\s+|starting\s+|current\s+|measured\s+)?conc\w*\.?|qubit"),
    ("target", r"target(?:\s+conc\w*\.?)?|final\s+conc\w*\.?|normali[sz]e\s+to|to"),
    ("final", r"final\s+vol\w*\.?|(?:total\s+|final\s+)?vol(?:ume)?\.?|final|total"),
    ("diluent", r"diluent|dilute\s+with|top\s+up\s+with|buffer|with"),
    ("dest", r"dest\w*\.?|output(?:\s+plate)?|into|to\s+plate|target\s+plate"),
    ("samples", r"(?:samples?|inputs?|sources?|libs|librar(?:y|ies))(?:\s+(?:plate|wells?))?|from"),
    ("head", r"task|step|action|protocol|op(?:eration)?"),
)
_FIELD = re.compile(
    _BULLET
    + r"(?P<key>"
    + "|".join(f"(?P<{name}>{pattern})" for name, pattern in _KEYS)
    + r")\s*(?:\((?P<unit>[^)]*)\))?(?:\s*[:=]\s*|(?<=into)\s+)(?P<value>\S.*?)\s*[.;,]?\s*$",
    _FLAGS,
)
_HEAD = re.compile(_BULLET + r"(?P<text>[^:]*\b(?:normali[sz]\w*|norm)\b[^:]*?)\s*:?\s*$", _FLAGS)
# "- dilute lysates A1-D1 1:10" over "- diluent: PBS", "- final volume: 100 uL", "- into Y"
_DILUTION = re.compile(
    _BULLET + r"(?P<text>dilut\w*\b(?:[^:\n]|(?<=\d):(?=\d))*?"
    r"(?:\b1\s*[:/]\s*\d+|\b\d+\s*-?\s*(?:x|fold)\b|\b1\s+in\s+\d+)[^:\n]*?)\s*:?\s*$",
    _FLAGS,
)
_NOUN = re.compile(r"^(?:normali[sz]ation|norm)$", _FLAGS)
_LEVELS = re.compile(r"\d\s*(?:[pnuµm]g\s*/|[pnuµm]M\b)")  # "extracts A1-C1 (20, 40, 80 ng/uL)"
_TO_LEVEL = re.compile(r"\s+to\s+(?=~?\d)", _FLAGS)


def _fields(lines: list[str], start: int) -> tuple[dict[str, str], int]:
    """The fields on lines ``start``.. (each kind once), and the index after them."""
    got: dict[str, str] = {}
    j = start
    while j < len(lines) and (m := _FIELD.match(lines[j])) is not None:
        kind = next(name for name, _ in _KEYS if m.group(name))
        if kind == "target" and not re.match(r"~?\d", m.group("value")):
            kind = "dest"  # "To: norm_out A1-C1"
        if kind in got:
            break
        value = m.group("value")
        if kind == "conc" and m.group("unit") and not re.search(r"[a-zA-Zµ]", value):
            value = f"{value} {m.group('unit')}"  # "Concs (ng/uL): 20, 40, 80"
        got[kind] = value
        j += 1
    return got, j


def _sentence(head: str, got: dict[str, str]) -> str:
    said = "Normalise" if _NOUN.match(head) or not head else head
    if "samples" in got:
        said += f" {got['samples']}"
    if "conc" in got:
        level = _TO_LEVEL.search(said)
        if level is None:
            said += f" ({got['conc']})"
        else:
            said = f"{said[: level.start()]} ({got['conc']}){said[level.start() :]}"
    if "target" in got:
        said += f" to {got['target']}"
    if "final" in got:
        said += f", {got['final']} final"
    if "dest" in got:
        said += f", into {got['dest']}"
    if "diluent" in got:
        said += f", with {got['diluent']}"
    return said


def _form(lines: list[str], i: int) -> tuple[str, int] | None:
    """The sentence the form starting at line ``i`` says, and the index after it."""
    field = _FIELD.match(lines[i])
    if field is not None and field.group("head") and _SAYS.search(field.group("value")):
        head, start = field.group("value"), i + 1  # "Task: normalise"
    elif field is None and (m := _HEAD.match(lines[i]) or _DILUTION.match(lines[i])):
        head, start = m.group("text").strip(), i + 1
    else:
        return None
    got, j = _fields(lines, start)
    if _DILUTION.match(lines[i]) and len(got) >= 2 and not {"conc", "target"} & set(got):
        return _sentence(head, got), j  # a ratio dilution's parts, a line each
    targeted = "target" in got or _TO_LEVEL.search(head)
    levels = "conc" in got or _LEVELS.search(got.get("samples", ""))
    if len(got) < 3 or not levels or not targeted:
        return None
    return _sentence(head, got), j


# "Normalize: dna_plate A1-D1; 25, 50, 12.5, 100 ng/uL -> 5 ng/uL; 20 uL final; TE; norm96 A1-D1"
_SEMI = re.compile(r"\s*;\s*")
_PIECED = re.compile(r"^(\s*normali[sz]e)\s*:\s*((?:[^;\n]+;){2,}[^;\n]+)$", _FLAGS | re.MULTILINE)


def rewrite(text: str) -> str:
    """``text`` with each normalisation form as one sentence, and a normalisation said in
    pieces after its label as one clause."""
    text = _PIECED.sub(lambda m: f"{m.group(1)} {_SEMI.sub(', ', m.group(2))}", text)
    if "\n" not in text or not _SAYS.search(text):
        return text  # cheap: most requests hold no such form
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if (form := _form(lines, i)) is None:
            out.append(lines[i])
            i += 1
            continue
        out.append(form[0])
        i = form[1]
    return "\n".join(out)
