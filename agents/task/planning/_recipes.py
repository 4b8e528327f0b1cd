"""Recipe tables: a line per well with the volume of each of two or more liquids, as kit
inserts and notebooks write standards and normalisations by volume.

    well | lysate uL | RIPA uL          O1  20 std / 0 NFW
    A1   | 12.5      | 37.5             O2  10 / 10
    B1   | 20        | 30               O6  0 / 20 (blank)

The columns are named by a header line or by the words after the first row's numbers. Each
column becomes one line per liquid ("NFW: O2 10 uL, O3 15 uL"), in the order the text before
the table pours them ("NFW first then the standard", "RIPA buffer first, then lysate"), else
in column order; a 0 is no transfer. A column word the lab does not know ("std") is the one
liquid the text before the table names that no other column took; otherwise it stays as
written, and the later stages ask about it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.task.planning._coverage import _key, clauses_of
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning.models import TraceItem

_FLAGS = re.IGNORECASE
_ROW = re.compile(r"^\s*(?:[-*•]\s*)?\|?\s*([A-Pa-p]\d{1,2})\s*(?:\||:)?\s*(\S.*?)\s*\|?\s*$")
_CELL_SEP = re.compile(r"\s*(?:\||/|\+|;|,|\t|\s{2,})\s*")
_CELL = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL])?(?:\s+(?:of\s+)?([A-Za-z][\w .%()-]*?))?$")
_REMARK = re.compile(r"\s*\([^()]*\)\s*$|\s*=\s*\w+\s*$")  # "(blank)", "= blank"
_HEADER_WELL = re.compile(r"^(?:wells?|pos(?:ition)?|std|standard|tube|#)$", _FLAGS)
_UNIT_WORD = re.compile(r"\s*(?:\(?\s*(?:u[lL])\s*\)?|volume|vol\.?)\s*$", _FLAGS)
_FIRST = re.compile(r"^\s*(?:first|1st|before\b)", _FLAGS)
_LAST = re.compile(r"^\s*(?:last|second|2nd|after\b|at\s+the\s+end)", _FLAGS)
_THEN = re.compile(r"\b(?:then|followed\s+by|after\s+that)\s+(?:the\s+)?$", _FLAGS)


def _cells(rest: str) -> list[tuple[float, str]] | None:
    """(volume, column word) of each cell of a row, or None when it is not a recipe row."""
    rest = _REMARK.sub("", rest)
    out = []
    for cell in _CELL_SEP.split(rest.strip()):
        m = _CELL.match(cell.strip())
        if m is None:
            return None
        out.append((float(m.group(1)), (m.group(2) or "").strip()))
    return out if len(out) >= 2 else None


def _header(line: str, width: int) -> list[str] | None:
    """The column words of a header line ("well | lysate uL | RIPA uL"), or None."""
    cells = [c for c in _CELL_SEP.split(line.strip().strip("|").strip()) if c]
    if len(cells) != width + 1 or not _HEADER_WELL.match(cells[0]):
        return None
    names = [_UNIT_WORD.sub("", c).strip() for c in cells[1:]]
    return names if all(n and not re.search(r"\d", n) for n in names) else None


def _liquid(word: str, said: list[str], lex: Lexicon) -> str | None:
    """The lab liquid a column word names: its own match, else a liquid said before the table
    whose name holds it ("RIPA" -> "RIPA buffer", "std" -> "lambda DNA standard")."""
    found = {m.name for m in lex.liquid_mentions(word)}
    if len(found) == 1:
        return found.pop()
    stem = word.lower().rstrip("s")
    near = [n for n in said if stem and (stem in n.lower() or _abbreviates(stem, n))]
    if not near and _STOCK.fullmatch(word):  # "std" for "BSA stock"
        near = [n for n in said if _STOCK.search(n)]
    return near[0] if len(set(near)) == 1 else None


_STOCK = re.compile(r"\b(?:std|stds|standards?|stocks?|stock\s+solution)\b", _FLAGS)


def _abbreviates(short: str, name: str) -> bool:
    """ "std" for "standard": the letters of the short word, in order, start a word of it."""
    for word in re.findall(r"[a-z]+", name.lower()):
        it = iter(word)
        if word[0] == short[0] and all(ch in it for ch in short):
            return True
    return False


def _order(columns: list[str], before: str, words: list[str]) -> list[int]:
    """The columns in the order the text before the table pours them (by each column's
    liquid, else by its word: "RIPA buffer first, then lysate")."""
    low = before.lower()
    said = [c if c.lower() in low else w for c, w in zip(columns, words, strict=True)]
    pos = {i: low.rfind(c.lower()) for i, c in enumerate(said)}
    if not all(p >= 0 for p in pos.values()):
        return list(range(len(columns)))
    first = [i for i, p in pos.items() if _FIRST.match(before[p + len(said[i]) :])]
    last = [i for i, p in pos.items() if _LAST.match(before[p + len(said[i]) :])]
    then = [i for i, p in pos.items() if _THEN.search(before[:p])]
    if first or last or then:
        if first or then:
            ranked = sorted(pos, key=lambda i: (i not in first, i in last, pos[i]))
        else:
            ranked = sorted(pos, key=lambda i: (i in last, i))
        return ranked
    return list(range(len(columns)))


# the lines written for a table, the lines it had, the sentences before it that it took in
Table = tuple[list[str], list[str], list[str]]
_WELL_REF = re.compile(r"\b[A-Pa-p]\d{1,2}\b")
_VOLUME = re.compile(r"(\d+(?:\.\d+)?)\s*u[lL]\b")
_OTHER_ACTION = re.compile(
    r"\b(?:mix|shak|incubat|read|measur|spin|centrifug|seal|wash|remov|discard|aspirat|move|"
    r"park|cycl|heat|cool|wait|repeat)\w*",
    _FLAGS,
)
_SENTENCE = re.compile(r"(?<=[.;:])\s+(?=\S)")


def rewrite(norm: Normalised, lex: Lexicon) -> tuple[Normalised, list[Table]]:
    """The request with each recipe table written as one line per liquid, and the tables."""
    lines = norm.text.split("\n")
    out: list[str] = []
    i = 0
    tables: list[Table] = []
    while i < len(lines):
        block = _block(lines, i)
        if block is None:
            out.append(lines[i])
            i += 1
            continue
        start, end, rows, header = block
        had = lines[start - 1 : end] if header is not None else lines[start:end]
        if header is not None and out and out[-1] is lines[start - 1]:
            out.pop()
        intro = out[-1] if out else ""
        written = _lines(rows, header, intro, lex)
        taken = _intro(intro, rows) if written else None
        if written is None or taken is None:
            out.extend(had)
            i = end
            continue
        kept, said = taken
        if out:
            out[-1] = kept
        out.extend(written)
        if end < len(lines) and _restates(lines[end], written, lex):
            said = [*said, lines[end]]  # "(LIB01 well -> same well of norm_plate)": said already
            end += 1
        tables.append((written, had, said))
        i = end
    if not tables:
        return norm, []
    return Normalised(text="\n".join(x for x in out if x.strip()), quoted=norm.quoted), tables


_SAME = re.compile(
    r"\bsame\s+wells?\b|\bwell[\s-]+(?:to|for)[\s-]+well\b|\bmatching\s+wells?\b", _FLAGS
)


def _restates(line: str, written: list[str], lex: Lexicon) -> bool:
    """A line after a table that only says its wells go to the same wells of plates the
    table already pours between (no volume, no other action)."""
    plates = [m.name for m in lex.labware_mentions(line)[0] if m.sure]
    return (
        bool(_SAME.search(line))
        and not _VOLUME.search(line)
        and not _OTHER_ACTION.search(line)
        and bool(plates)
        and all(any(re.search(rf"\b{re.escape(lw)}\b", w) for w in written) for lw in plates)
    )


def _intro(
    line: str, rows: list[tuple[str, list[tuple[float, str]]]]
) -> tuple[str, list[str]] | None:
    """The line before a table split into what stays and the sentences that only introduce
    the table (its plates, liquids, order, the volume of each well), or None when such a
    sentence says a volume per well that a row does not add up to."""
    sentences = _SENTENCE.split(line.strip())
    wells = {w for w, _ in rows}
    taken: list[str] = []
    while sentences:
        last = sentences[-1]
        refs = {w.upper() for w in _WELL_REF.findall(last)}
        vols = [float(v) for v in _VOLUME.findall(last)]
        if not refs <= wells or _OTHER_ACTION.search(last) or len(vols) > 1:
            break
        if vols and any(abs(sum(v for v, _ in cells) - vols[0]) > 1e-6 for _, cells in rows):
            return None  # "50 uL final" and a row of 12.5 + 30: asked, never guessed
        taken.insert(0, sentences.pop())
    return " ".join(sentences), taken


def trace_rows(
    trace: list[TraceItem], tables: list[Table], request: str, labware: Iterable[str]
) -> None:
    """Each row of a table, as the person wrote it, is planned by its liquids' lines; the
    sentences that introduced it are said by it."""
    if not tables:
        return  # no table: the request need not be split again
    clauses = clauses_of(request, labware)
    for written, had, said in tables:
        mine = {_key(w) for w in written}
        steps = list(dict.fromkeys(s for t in trace if _key(t.clause) in mine for s in t.steps))
        rows = {_key(h) for h in had}
        intro = " ".join(_key(x) for x in said)
        what = "a recipe table, planned by liquid: " + "; ".join(written)
        for clause in clauses:
            if _key(clause) in rows:
                trace.append(TraceItem(clause=clause, kind="action", understood=what, steps=steps))
            elif said and _key(clause) and _key(clause) in intro:
                trace.append(TraceItem(clause=clause, kind="setting", understood=what, steps=[]))


def _block(
    lines: list[str], i: int
) -> tuple[int, int, list[tuple[str, list[tuple[float, str]]]], list[str] | None] | None:
    """The rows of a recipe table starting at line ``i`` (three rows at least, as wide as
    each other), with the header line above them when there is one."""
    rows: list[tuple[str, list[tuple[float, str]]]] = []
    j = i
    while j < len(lines):
        m = _ROW.match(lines[j])
        cells = _cells(m.group(2)) if m else None
        if m is None or cells is None or (rows and len(cells) != len(rows[0][1])):
            break
        rows.append((m.group(1).upper(), cells))
        j += 1
    if len(rows) < 2 or (i > 0 and _ROW.match(lines[i - 1]) and _cells(lines[i - 1])):
        return None
    header = _header(lines[i - 1], len(rows[0][1])) if i > 0 else None
    return i, j, rows, header


def _lines(
    rows: list[tuple[str, list[tuple[float, str]]]],
    header: list[str] | None,
    before: str,
    lex: Lexicon,
) -> list[str] | None:
    words = header or [w for _, w in rows[0][1]]
    said = [m.name for m in lex.liquid_mentions(before)]
    if not any(words) and len(set(said)) == len(words):
        words = list(dict.fromkeys(said))  # "IL-6 standard then diluent:" + "A12  100 / 100 uL"
    if not all(words):
        return None
    names: list[str | None] = [_liquid(w, said, lex) for w in words]
    left = [n for n in dict.fromkeys(said) if n not in names]
    if names.count(None) == 1 and len(left) == 1:
        names[names.index(None)] = left[0]
    columns = [n or w for n, w in zip(names, words, strict=True)]
    wells = {well for well, _ in rows}
    plates = list(dict.fromkeys(m.name for m in lex.labware_mentions(before)[0] if m.sure))
    held = lex.lab.liquids()
    sources = {  # a column poured from the same wells of a plate named before the table
        c: lw
        for c, name in enumerate(columns)
        for lw in plates
        if wells <= {w for p, w, _ in held.get(name, []) if p == lw}
    }
    dest = [lw for lw in plates if lw not in sources.values()]
    if len(dest) != 1:
        return None  # the plate the table fills is not said: left as written
    out = []
    for c in _order([*columns], before, words):
        items = ", ".join(f"{well} {cells[c][0]:g} uL" for well, cells in rows if cells[c][0] > 0)
        if not items:
            continue
        if c in sources:
            out.append(f"transfer {columns[c]} from {sources[c]} to {dest[0]}, same wells: {items}")
        else:
            out.append(f"add {columns[c]} to {dest[0]} {items}")
    return out
