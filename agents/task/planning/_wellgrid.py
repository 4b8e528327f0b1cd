"""Written well sets expanded on a plate's grid (``rows`` x ``cols``): a rectangle row by row
in the direction it is written, rows and columns in the order named, the whole plate, its edge
and its inside, its corners, wells counted in reading order, and the relative selections (every
other, odd / even, first / last n, the nth row or column)."""

from __future__ import annotations

from agents.task.planning._wellpatterns import Part, SelectionError, row_letter


def _split(name: str) -> tuple[int, int]:
    return ord(name[0].upper()) - 65, int(name[1:])


def _name(r: int, c: int) -> str:
    return f"{row_letter(r)}{c}"


def _check(name: str, rows: int, cols: int) -> tuple[int, int]:
    r, c = _split(name)
    if not (0 <= r < rows and 1 <= c <= cols):
        raise SelectionError(f"{name.upper()} is not on a {rows}x{cols} plate", [name.upper()])
    return r, c


def _expand(part: Part, rows: int, cols: int) -> list[str]:
    k, a = part.kind, part.args
    if k == "well":
        return [_name(*_check(str(a[0]), rows, cols))]
    if k == "rect":
        (r0, c0), (r1, c1) = _check(str(a[0]), rows, cols), _check(str(a[1]), rows, cols)
        rs = range(r0, r1 + (1 if r1 >= r0 else -1), 1 if r1 >= r0 else -1)
        cs = range(c0, c1 + (1 if c1 >= c0 else -1), 1 if c1 >= c0 else -1)
        return [_name(r, c) for r in rs for c in cs]
    if k == "rows":
        out: list[str] = []
        for letter in a:
            r = ord(str(letter)) - 65
            if r >= rows:
                raise SelectionError(
                    f"there is no row {letter} on a {rows}x{cols} plate", [f"row {letter}"]
                )
            out.extend(_name(r, c) for c in range(1, cols + 1))
        return out
    if k == "cols":
        out = []
        for col in a:
            if not 1 <= int(str(col)) <= cols:
                raise SelectionError(
                    f"there is no column {col} on a {rows}x{cols} plate", [f"column {col}"]
                )
            out.extend(_name(r, int(str(col))) for r in range(rows))
        return out
    if k == "all":
        return [_name(r, c) for r in range(rows) for c in range(1, cols + 1)]
    if k in ("inner", "outer"):  # the wells off the plate's edge / on it
        edge = {(r, c) for r in range(rows) for c in range(1, cols + 1)
                if r in (0, rows - 1) or c in (1, cols)}  # fmt: skip
        return [_name(r, c) for r in range(rows) for c in range(1, cols + 1)
                if ((r, c) in edge) == (k == "outer")]  # fmt: skip
    if k == "corners":  # A1, A12, H1, H12 on a 96-well plate; or a rectangle's corners
        (r0, c0), (r1, c1) = (
            (_check(str(a[0]), rows, cols), _check(str(a[1]), rows, cols))
            if a
            else ((0, 1), (rows - 1, cols))
        )
        return list(dict.fromkeys(_name(r, c) for r in (r0, r1) for c in (c0, c1)))
    if k == "ordinal":  # "wells 1-24": A1 = 1, A2 = 2, ... in reading order
        lo, hi = (int(str(x)) for x in a)
        if not 1 <= lo <= hi <= rows * cols:
            raise SelectionError(f"a plate has {rows * cols} wells", [f"well {hi}"])
        return [_name((i - 1) // cols, (i - 1) % cols + 1) for i in range(lo, hi + 1)]
    if k == "alternate":
        every = [w for p in a[0] for w in _expand(p, rows, cols)]  # type: ignore[attr-defined]
        begin = every.index(str(a[1])) if a[1] in every else 1 if a[1] == "even" else 0
        return every[begin :: int(str(a[2])) if len(a) > 2 else 2]
    if k == "minus":  # "all wells except column 12"
        gone = set(w for p in a[1] for w in _expand(p, rows, cols))  # type: ignore[attr-defined]
        return [w for p in a[0] for w in _expand(p, rows, cols) if w not in gone]  # type: ignore[attr-defined]
    if k == "cross":
        first = [w for p in a[0] for w in _expand(p, rows, cols)]  # type: ignore[attr-defined]
        second = set(w for p in a[1] for w in _expand(p, rows, cols))  # type: ignore[attr-defined]
        return [w for w in first if w in second]
    if k in ("other", "parity", "firstn", "nth"):
        axis, picked = str(a[0]), _pick(part, rows, cols)
        if axis == "col":
            return _expand(Part("cols", tuple(picked)), rows, cols)
        return _expand(Part("rows", tuple(row_letter(i - 1) for i in picked)), rows, cols)
    raise SelectionError(f"unknown selection {part}", [])  # pragma: no cover


def _pick(part: Part, rows: int, cols: int) -> list[int]:
    """1-based indices of the rows or columns a relative selection names."""
    axis, n = str(part.args[0]), cols if part.args[0] == "col" else rows
    if part.kind == "other":
        start, step = int(str(part.args[1])), int(str(part.args[2]))
        return list(range(start, n + 1, step))
    if part.kind == "parity":
        return list(range(1 if part.args[1] == "odd" else 2, n + 1, 2))
    if part.kind == "firstn":
        count = int(str(part.args[2]))
        if count > n:
            raise SelectionError(f"a plate has {n} {axis}s, not {count}", [f"{count} {axis}s"])
        return (
            list(range(1, count + 1))
            if part.args[1] == "first"
            else list(range(n - count + 1, n + 1))
        )
    which = int(str(part.args[1]))
    if which > n:
        raise SelectionError(f"a plate has {n} {axis}s: there is no {axis} {which}", [])
    return [n if which < 0 else which]
