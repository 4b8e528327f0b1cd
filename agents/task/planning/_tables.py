"""Tables in a request: a header that names the source, destination and volume columns, and
the rows under it (comma- or tab-separated, a Markdown table with pipes, or a header in
parentheses at the end of the line that opens the list: "Cherry-pick from samples to
dest_plate (source, destination, volume):"). Each row becomes one written pair,
``source -> destination volume unit``, which the later stages read like any pair list.

A line is a header only when its cells name both a source and a destination; a row only when
it has as many cells as the header, wells where the header says wells, and a number where it
says volume. Anything else is left as it was written.
"""

from __future__ import annotations

import re

from agents.task.planning._layout_tables import layout_rows

_FLAGS = re.IGNORECASE
_SEP = re.compile(r"\s*(?:\t|\||,|;)\s*|\s{2,}")
_SRC = re.compile(r"\b(?:source|src|from|origin|input)\b", _FLAGS)
_DST = re.compile(r"\b(?:dest\w*|dst|to|target|output)\b", _FLAGS)
_LABWARE = re.compile(r"\b(?:plate|labware|slot|rack|container|block)\b", _FLAGS)
_VOLUME = re.compile(r"\b(?:vol\w*|amount|[uµμ][lL]|m[lL]|microlit\w*)(?!\w)", _FLAGS)
_ML = re.compile(r"\bm[lL]\b|millilit", _FLAGS)
_WELL = re.compile(r"^(?:[\w-]+\s+)?[A-Pa-p]\d{1,2}$")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)\s*(?:[uµμ][lL]|m[lL])?$")
_RULE = re.compile(r"^[\s|:+-]+$")  # a Markdown table's |---|---| line
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)])\s+")
_IN_PARENS = re.compile(r"\s*\(([^()]*)\)\s*(:?)\s*$")


def _cells(line: str) -> list[str]:
    body = _ITEM.sub("", line).strip().strip("|").strip()
    return [c.strip() for c in _SEP.split(body)]


def _columns(cells: list[str]) -> list[str] | None:
    """The role of each header cell (src_lw, src, dst_lw, dst, vol, other), or None."""
    if any(re.search(r"[\d_]", c) or len(c.split()) > 3 for c in cells):
        return None  # "from plate_1, to plate_2" is a sentence, not a header
    roles: list[str] = []
    for cell in cells:
        if _SRC.search(cell):
            roles.append("src_lw" if _LABWARE.search(cell) else "src")
        elif _DST.search(cell):
            roles.append("dst_lw" if _LABWARE.search(cell) else "dst")
        elif _VOLUME.search(cell):
            roles.append("vol")
        else:
            roles.append("other")
    if roles.count("src") != 1 or roles.count("dst") != 1 or roles.count("vol") > 1:
        return None
    return roles


def _row(cells: list[str], roles: list[str], unit: str) -> str | None:
    if len(cells) != len(roles):
        return None
    got = dict(zip(roles, cells, strict=True))
    if not _WELL.match(got["src"]) or not _WELL.match(got["dst"]):
        return None
    src = f"{got['src_lw']} {got['src']}" if got.get("src_lw") else got["src"]
    dst = f"{got['dst_lw']} {got['dst']}" if got.get("dst_lw") else got["dst"]
    if "vol" not in got:
        return f"{src} -> {dst}"
    number = _NUMBER.match(got["vol"])
    if number is None:
        return None
    own = re.search(r"\b(u[lL]|m[lL])\b", got["vol"])  # "0.002 mL" in a column headed "volume"
    return f"{src} -> {dst} {number.group(1)} {own.group(1) if own else unit}"


# "source plate: samples", "- destination: dest_plate", "volume = 10 uL": a form's fields.
_FIELD = re.compile(
    r"^\s*(?:[-*+]\s+)?(?P<key>source(?:\s+(?:plate|labware))?|src|from|origin|"
    r"(?:mother|parent|daughter)(?:\s+(?:plate|block))?|"
    r"(?:dest(?:ination)?|dst|target)(?:\s+(?:plate|labware|wells?))?|to|"
    r"(?:(?:transfer|dispense)\s+)?(?:volume|vol|amount)(?:\s*(?:per|/)\s*well|\s+each)?|"
    r"liquid|reagent|solution|wells?|columns?|rows?|channels?|pipett?e?|head|plate|labware"
    r"|tips?(?:\s+(?:policy|use|usage|handling|changes?))?|layout|mapping|pattern)"
    r"\s*[:=]\s*(?P<value>\S.*?)\s*$",
    _FLAGS,
)
_KEYS = {"src": "source", "from": "source", "origin": "source", "dst": "dest", "to": "dest",
         "target": "dest", "destination": "dest", "vol": "volume", "plate": "dest",
         "labware": "dest", "reagent": "liquid", "solution": "liquid", "mother": "source",
         "parent": "source", "daughter": "dest"}  # fmt: skip
_VOLUME_KEY = re.compile(r"(?:(?:transfer|dispense)\s+)?(?:volume|vol|amount)\b")


def _said_key(said: str) -> str:
    """The field a form's key names ("Target plate" -> dest, "Amount per well" -> volume)."""
    if _VOLUME_KEY.match(said):
        return "volume"
    if re.search(r"\bwells?$", said):  # "Destination wells: A1-A8"
        return "wells"
    key = said.split()[0]
    if key.startswith("tip"):  # "Tip change: every well"
        return "tips"
    return _KEYS.get(key, key)


# the form's verb said on the line after its fields: "Stamp.", "Copy all 96 wells."
_VERB_AFTER = re.compile(
    r"^\s*(?:please\s+)?(?:stamp|copy|replicate|transfer|dispense|aliquot|distribute|spot)"
    r"(?:\s+(?:it|them|everything|all(?:\s+96)?\s+wells|the\s+(?:whole\s+)?plate))?\s*[.!]?\s*$",
    _FLAGS,
)
_BULLET = re.compile(r"^\s*[-*+]\s+(?P<value>\S.*?)\s*$")


def _form(lines: list[str], i: int) -> tuple[str, int] | None:
    """Lines i.. that fill in a form (a source and a destination at least), as one sentence
    under the heading before them, and the index after the form."""
    fields: dict[str, str] = {}
    extra: list[str] = []
    j, copying = i, False
    while j < len(lines):
        m = _FIELD.match(lines[j])
        if m:
            said = m.group("key").lower()
            key = _said_key(said)
            copying = copying or said.split()[0] in ("mother", "parent", "daughter")
            fields[key] = m.group("value").rstrip(" .;,")
        elif (b := _BULLET.match(lines[j])) and fields:
            extra.append(b.group("value").rstrip(" .;,"))
        else:
            break
        j += 1
    head = lines[i - 1].strip().rstrip(":.").strip() if i else ""
    if re.fullmatch(
        r"(?:all|every|each)(?:\s+wells?)?|whole\s+plate", fields.get("wells", ""), _FLAGS
    ):
        fields["wells"] = "all wells"  # "Wells: all"
    if not head and j < len(lines) and _VERB_AFTER.match(lines[j]):
        head, j = lines[j].strip().rstrip(".!").strip(), j + 1  # "... Volume: 5 uL / Stamp."
    if "source" not in fields and "liquid" in fields and {"dest", "wells"} & set(fields):
        # "Plate: elisa_A / Wells: A1-A6 / Reagent: TMB / Volume: 100 uL": a liquid added
        volume = fields.pop("volume", "")
        said = f"{head or 'Add'} {volume} {fields.pop('liquid')} to {fields.pop('dest', '')}"
        wells = [fields.pop(k) for k in ("wells", "well") if k in fields]
        said += "".join(f" {w}" for w in wells)
    elif "source" not in fields and {"dest", "volume"} <= set(fields):
        # "Dispense stop mix. / Plate: X / Wells: ... / Volume: 5 uL": the head names the liquid
        said = f"{head + ',' if head else 'Add'} {fields.pop('volume')} to {fields.pop('dest')}"
        said += "".join(f" {fields.pop(k)}" for k in ("wells", "well") if k in fields)
    elif "source" not in fields or "dest" not in fields:
        return None
    else:
        verb = "Stamp" if copying else "Transfer"
        said = f"{head or verb} from {fields.pop('source')} to {fields.pop('dest')}"
    more = [f"{k} {v}" if k in ("wells", "well", "columns", "column", "rows", "row")
            else f"tips: {v}" if k == "tips" and "tip" not in v.lower() else v
            for k, v in fields.items()] + extra  # fmt: skip
    return ", ".join([said, *more]), j


# "source: cmpd, destination: assay", "(src = cmpd, dst = assay, ...)": two fields in one line
_INLINE_FIELDS = re.compile(
    r"\b(?:source|src|origin)(?:\s+(?:plate|labware))?\s*[:=]\s*([^\s,;()]+)[ \t]*[,;]?[ \t]*"
    r"\b(?:dest(?:ination)?|dst|target)(?:\s+(?:plate|labware))?\s*[:=]\s*([^\s,;()]+)"
    # or said without colons, a comma between: "stamp source X, dest Y, 5 uL"
    r"|\bsource(?:\s+plate)?[ \t]+([^\s,;():]+)[ \t]*,[ \t]*"
    r"(?:dest(?:ination)?|target)(?:\s+plate)?[ \t]+([^\s,;():]+)",
    _FLAGS,
)


# "B03  A1" (or "B03 | A1 | 20"): a source well and its destination, the heading above them
# naming both plates in that order ("Hit-pick, cmpd_src -> ip_plate, 20 uL each")
_BARE_PAIR = re.compile(
    r"^\s*(?:[-*+]|\d{1,2}[.)])?\s*([A-Pa-p]\d{1,2})[ \t]*(?:\t|\||[ \t])[ \t]*([A-Pa-p]\d{1,2})"
    r"(?:[ \t]*(?:\t|\||[ \t])[ \t]*(\d+(?:\.\d+)?)[ \t]*([uµμ][lL]|m[lL])?)?[ \t|]*$"
)
_SAYS_WELLS = re.compile(r"\b[A-Pa-p]\d{1,2}\b|\b(?:columns?|cols?|rows?)\b", _FLAGS)  # its own
_DIRECTED = re.compile(r"->|→|\bfrom\b.*\b(?:to|into|onto)\b", _FLAGS)


def bare_pairs(lines: list[str]) -> list[str]:
    """Rows of two wells under a heading that says from which plate to which: written pairs."""
    out: list[str] = []
    for i, line in enumerate(lines):
        m = _BARE_PAIR.match(line)
        head = next((k for k in range(i - 1, -1, -1) if not _BARE_PAIR.match(lines[k])), None)
        if (
            m is None
            or head is None
            or not _DIRECTED.search(lines[head])
            or _SAYS_WELLS.search(lines[head])
        ):
            out.append(line)
            continue
        if head == i - 1 and not out[-1].rstrip().endswith(":"):
            out[-1] = out[-1].rstrip().rstrip(".") + ":"  # the heading of the pairs under it
        volume = f" {m.group(3)} {m.group(4) or 'uL'}" if m.group(3) else ""
        out.append(f"- {m.group(1)} -> {m.group(2)}{volume}")
    return out


def _roles_of(m: re.Match[str]) -> str:
    """ "X to Y" from the source and destination fields, with or without colons."""
    return f"{m.group(1) or m.group(3)} to {m.group(2) or m.group(4)}"


def _fields_a_line(line: str) -> str:
    """ "Reagent = PBS-T; volume = 150 uL; wells = B1-B12": one field a line, the head first
    ("Dispense DPBS. Source: X A4. Destination: Y row B. Volume: 50 uL."), and a head said
    after the fields put before them ("Source: X. Destination: Y. Volume: 5 uL. Stamp.")."""
    parts = [p.strip() for p in re.split(r"\s*(?:[;,]|\.(?=\s))\s*", line.strip(" ."))]
    if len(parts) < 2 or sum(bool(_FIELD.match(p)) for p in parts) < max(2, len(parts) - 1):
        return line
    if all(_FIELD.match(p) for p in parts[1:]):
        return "\n".join(parts)
    if len(parts) > 2 and all(_FIELD.match(p) for p in parts[:-1]):
        return "\n".join([parts[-1], *parts[:-1]])
    return line


def rewrite(text: str) -> str:
    """``text`` with every table's rows written as pairs (and its header line dropped), and a
    form's fields ("source: X", "destination: Y", "volume: 10 uL") as one sentence."""
    lines = [_fields_a_line(line) for line in layout_rows(text).split("\n")]
    for i, line in enumerate(lines):  # a line of only the two fields heads the pairs under it
        if (m := _INLINE_FIELDS.fullmatch(line.strip(" .;"))) and i + 1 < len(lines):
            pairs = re.search(r"[A-Pa-p]\d", lines[i + 1])
            lines[i] = f"Transfer from {_roles_of(m)}" + (":" if pairs else "")
    text = _INLINE_FIELDS.sub(lambda m: f"from {_roles_of(m)}", "\n".join(bare_pairs(lines)))
    lines = text.split("\n")
    for i in range(len(lines)):
        if i < len(lines) and (form := _form(lines, i)) is not None:
            said, end = form
            if end < len(lines) and re.search(r"[A-Pa-p]\d", lines[end]):
                said += ":"  # pairs follow: they are the form's items
            start = i - 1 if i and not _FIELD.match(lines[i - 1]) else i
            lines[start:end] = [said]
            break
    text = "\n".join(lines)
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        own = _columns(_cells(line)) if len(_cells(line)) >= 2 else None
        parens = _IN_PARENS.search(line) if own is None else None
        roles = own or (_columns(_cells(parens.group(1))) if parens else None)
        header = line if own else (parens.group(1) if parens else "")
        rows: list[str] = []
        j = i + 1
        if roles is not None:
            vol = next((c for c, r in zip(_cells(header), roles, strict=True) if r == "vol"), "")
            unit = "mL" if _ML.search(vol) else "uL"
            while j < len(lines) and (_RULE.match(lines[j]) or not lines[j].strip()):
                j += 1
            while j < len(lines):
                if _RULE.match(lines[j]):
                    j += 1
                    continue
                row = _row(_cells(lines[j]), roles, unit)
                if row is None:
                    break
                rows.append(row)
                j += 1
        if not rows:
            out.append(line)
            i += 1
            continue
        if parens is not None:  # "Cherry-pick from samples to dest_plate (source, ...):"
            out.append(line[: parens.start()].rstrip() + ":")
        out.extend(f"- {row}" for row in rows)
        i = j
    return "\n".join(_dest_said(line) for line in out)


# "Replicate X (5 uL/well) - destination: Y", "Stamp X, 5 uL, target plate Y": the role word
# said inside the clause, after a comma, dash or bracket, as the verb's "into"
_DEST_WORD = re.compile(
    r"\s*(?:[,;(]|\s[-–—])\s*(?:dest(?:ination)?\b(?:\s+plate\b)?|target\s+plate\b)\s*[:=]?\s*"
    r"(?=[A-Za-z_])(?!(?:wells?|volumes?|plates?|columns?|rows?|is|are)\b)",
    _FLAGS,
)
_INTO_SAID = re.compile(r"\b(?:to|into|onto)\b|->|→|=>", _FLAGS)


def _dest_said(line: str) -> str:
    """The line with a destination said by its role word read as "into" (when it says none)."""
    if _INTO_SAID.search(line) or len(_DEST_WORD.findall(line)) != 1:
        return line
    return _DEST_WORD.sub(" into ", line)
