"""Checks for interop/run.sh: judge one MCP Inspector CLI output, or the conformance results.

    check.py case KIND CASE                          -> "TOOL<tab>ARGS_JSON<tab>LABEL" for run.sh
    check.py inspector CHECK STDOUT_FILE EXIT_CODE INSTRUMENT KIND
                                                     -> exit 0 and one line, or exit 1 and why
    check.py conformance RESULTS_DIR SUITE_STDOUT BASELINE

CASE is ``error`` (a call that must fail with a structured error) or ``execute`` (a call with
dry_run false whose effect the next server, on the same state directory, must still show);
each kind's calls and expectations are ``interop/cases/<kind>.json``. Standard library plus
Labwright's wire contract (the common tool names). Every failure message says what was
expected and what came instead.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from device_servers.contract import COMMON_TOOLS as CONTRACT_TOOLS

# Every server has these, whatever its instrument.
COMMON_TOOLS = set(CONTRACT_TOOLS)
COMMON_PROMPTS = {"recover_from_error"}
# Per kind, interop/cases/<kind>.json: its own tools and prompts, a call that must fail (error),
# a call that executes (execute), and checks on its state when fresh and after the execute call
# (each [dotted.path, "==" | "approx" | "number", value]).
CASES = Path(__file__).resolve().parent / "cases"


def cases_of(kind: str) -> dict[str, Any]:
    path = CASES / f"{kind}.json"
    expect(path.exists(), f"no interop cases for instrument kind {kind!r}: add {path}")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def action_id(kind: str) -> str:
    return f"interop-{kind}-1"


def case(kind: str, which: str) -> str:
    """One line for run.sh: tool, JSON arguments (no spaces), label, tab-separated."""
    cases = cases_of(kind)
    if which == "error":
        tool, args, label = cases["error"]["tool"], cases["error"]["args"], cases["error"]["tool"]
    else:
        tool, label = cases["execute"]["tool"], cases["execute"]["label"]
        args = {**cases["execute"]["args"], "dry_run": False, "action_id": action_id(kind)}
    return "\t".join((tool, json.dumps(args, separators=(",", ":")), label))


def at(doc: Any, path: str) -> Any:
    """The value at a dotted path of a JSON document (KeyError names the missing part)."""
    for part in path.split("."):
        if not isinstance(doc, dict) or part not in doc:
            raise KeyError(part)
        doc = doc[part]
    return doc


def checked(state: dict[str, Any], checks: list[list[Any]]) -> str:
    """Every check of a state holds; one line saying what was seen."""
    seen = []
    for path, op, value in checks:
        try:
            got = at(state, path)
        except KeyError as exc:
            raise Mismatch(f"state has no {path} (missing {exc}): {short(state)}") from exc
        if op == "approx":
            ok = isinstance(got, int | float) and abs(got - value) < 1e-6
        elif op == "number":
            ok = isinstance(got, int | float) and not isinstance(got, bool)
        else:
            ok = got == value
        expect(ok, f"{path} is {got!r}, expected {op} {value!r}")
        seen.append(f"{path}={got}")
    return ", ".join(seen)


class Mismatch(Exception):
    pass


def expect(cond: bool, message: str) -> None:
    if not cond:
        raise Mismatch(message)


def short(value: Any, n: int = 300) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= n else text[:n] + "..."


def load_result(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_text().strip()
    except OSError as exc:
        raise Mismatch(f"cannot read the inspector's output: {exc}") from exc
    expect(bool(raw), "the inspector printed nothing on stdout")
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise Mismatch(f"stdout is not one JSON document ({exc}): {raw[:300]!r}") from exc
    expect(isinstance(doc, dict) and "result" in doc, f"no 'result' in the output: {short(doc)}")
    result = doc["result"]
    expect(isinstance(result, dict), f"'result' is not an object: {short(result)}")
    return result


def tool_payload(result: dict[str, Any]) -> dict[str, Any]:
    """structuredContent, after checking the text content carries the same JSON."""
    sc = result.get("structuredContent")
    if not isinstance(sc, dict):
        raise Mismatch(f"no structuredContent object: {short(result)}")
    texts = [c.get("text") for c in result.get("content") or [] if c.get("type") == "text"]
    expect(len(texts) == 1, f"expected one text content block, got {short(result.get('content'))}")
    expect(json.loads(texts[0]) == sc, "text content and structuredContent differ")
    return sc


class Checks:
    """The checks of one instrument (id and kind from examples/lab.yaml)."""

    def __init__(self, instrument: str, kind: str) -> None:
        self.id, self.kind = instrument, kind
        self.cases = cases_of(kind)

    def tools_list(self, result: dict[str, Any]) -> str:
        names = {t.get("name") for t in result.get("tools") or []}
        own = set(self.cases["tools"])
        want = COMMON_TOOLS | own
        missing, extra = sorted(want - names), sorted(str(n) for n in names - want)
        expect(not missing and not extra, f"tools/list lacks {missing}, has unexpected {extra}")
        for tool in result["tools"]:
            schema = tool.get("inputSchema") or {}
            expect(schema.get("type") == "object", f"{tool['name']}: inputSchema.type != object")
        return f"{len(names)} tools: the {len(COMMON_TOOLS)} common ones + {', '.join(sorted(own))}"

    def get_state(self, result: dict[str, Any]) -> str:
        expect(result.get("isError") is not True, f"get_state returned isError: {short(result)}")
        sc = tool_payload(result)
        expect(sc.get("ok") is True, f"get_state ok != true: {short(sc)}")
        state = sc.get("state") or {}
        expect(state.get("instrument") == self.id, f"state.instrument != {self.id!r}")
        expect(state.get("kind") == self.kind, f"state.kind != {self.kind!r}: {short(state)}")
        expect(
            state.get("estop") is False, f"a fresh server has its e-stop latched: {short(state)}"
        )
        return f"ok, {checked(state, self.cases['fresh'])}"

    def tool_error(self, result: dict[str, Any]) -> str:
        code = self.cases["error"]["code"]
        expect(result.get("isError") is True, f"expected isError true, got {short(result)}")
        sc = tool_payload(result)
        expect(sc.get("ok") is False, f"expected ok false: {short(sc)}")
        err = sc.get("error") or {}
        expect(err.get("code") == code, f"expected {code}, got {short(err)}")
        for key in ("detail", "fix_hint", "retriable", "defined"):
            expect(key in err, f"error lacks {key!r}: {short(err)}")
        expect(bool(err["fix_hint"]), f"empty fix_hint: {short(err)}")
        return f"isError true, error.code {code} with detail and fix_hint"

    def execute(self, result: dict[str, Any]) -> str:
        expect(result.get("isError") is not True, f"the call failed: {short(result)}")
        sc = tool_payload(result)
        expect(sc.get("ok") is True and sc.get("dry_run") is False, f"not executed: {short(sc)}")
        expect(sc.get("action_id") == action_id(self.kind), f"action_id not echoed: {short(sc)}")
        what = checked(sc.get("state") or {}, self.cases["after"])
        return f"executed (dry_run false): {what}, action_id echoed"

    def resource_state(self, result: dict[str, Any]) -> str:
        contents = result.get("contents") or []
        expect(len(contents) == 1, f"expected one content, got {short(contents)}")
        c = contents[0]
        expect(c.get("uri") == f"lab://{self.id}/state", f"uri {c.get('uri')!r}")
        expect(c.get("mimeType") == "application/json", f"mimeType {c.get('mimeType')!r}")
        state = json.loads(c.get("text") or "null")
        expect(
            isinstance(state, dict) and state.get("instrument") == self.id, f"not {self.id}'s state"
        )
        # The server before this one executed the `execute` case on the same state directory:
        # its effect is persisted across restarts.
        seen = checked(state, self.cases["after"])
        return f"application/json, {self.id}'s state, {seen} after a restart"

    def prompts_list(self, result: dict[str, Any]) -> str:
        names = {p.get("name") for p in result.get("prompts") or []}
        want = COMMON_PROMPTS | set(self.cases["prompts"])
        expect(
            names == want, f"prompts/list: expected {sorted(want)}, got {sorted(map(str, names))}"
        )
        return f"{len(names)} prompt(s): {', '.join(sorted(want))}"


def inspector(check: str, stdout: Path, rc: int, instrument: str, kind: str) -> None:
    checks = Checks(instrument, kind)
    if check == "tool_error":
        # The inspector CLI exits non-zero (5) when a tool answers isError; the result is on stdout.
        print(checks.tool_error(load_result(stdout)) + f" (inspector exit {rc})")
        return
    if check == "auth_rejected":
        raw = stdout.read_text() if stdout.exists() else ""
        expect(rc != 0, f"expected the call without a token to fail; exit 0, output {raw[:300]!r}")
        expect("result" not in raw, "a result came back without a token")
        print(f"refused without a token (inspector exit {rc})")
        return
    expect(rc == 0, f"the inspector exited {rc}")
    success = {
        "tools_list": checks.tools_list,
        "get_state": checks.get_state,
        "execute": checks.execute,
        "resource_state": checks.resource_state,
        "prompts_list": checks.prompts_list,
    }
    print(success[check](load_result(stdout)))


# ---------------------------------------------------------------- conformance
def read_baseline(path: Path) -> dict[str, str]:
    """`server:` entries of the suite's expected-failures YAML, each `- name  # reason`."""
    entries: dict[str, str] = {}
    section = None
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if re.match(r"^\w+:\s*(#.*)?$", line):
            section = line.split(":")[0]
            continue
        m = re.match(r"^\s+-\s+([\w./-]+)\s*(?:#\s*(.*))?$", line)
        expect(m is not None, f"{path}:{n}: cannot parse {line!r}")
        assert m is not None
        expect(bool(m.group(2)), f"{path}:{n}: {m.group(1)} has no '# reason'")
        if section == "server":
            entries[m.group(1)] = m.group(2).strip()
    return entries


def conformance(results: Path, suite_stdout: Path, baseline_path: Path) -> int:
    baseline = read_baseline(baseline_path)
    out = suite_stdout.read_text(errors="replace")
    total = re.search(r"Total: (\d+) passed, (\d+) failed", out)
    expect(
        "=== SUMMARY ===" in out and total is not None,
        "the conformance suite printed no summary (it did not finish); see its output above",
    )
    assert total is not None
    scenarios: dict[str, list[dict[str, Any]]] = {}
    for d in sorted(results.iterdir()):
        m = re.match(r"^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$", d.name)
        if m and (d / "checks.json").exists():
            scenarios[m.group(1)] = json.loads((d / "checks.json").read_text())
    expect(bool(scenarios), f"no scenario results in {results}")
    failed = {
        name: [c for c in checks if c.get("status") == "FAILURE"]
        for name, checks in scenarios.items()
    }
    failed = {k: v for k, v in failed.items() if v}
    passed = sorted(set(scenarios) - set(failed))
    n_checks_ok = sum(c.get("status") == "SUCCESS" for cs in scenarios.values() for c in cs)
    n_checks_bad = sum(len(v) for v in failed.values())
    expect(
        (n_checks_ok, n_checks_bad) == (int(total.group(1)), int(total.group(2))),
        f"checks.json counts {n_checks_ok}/{n_checks_bad} differ from the suite's {total.group(0)}",
    )

    unexpected = sorted(set(failed) - set(baseline))
    expected = sorted(set(failed) & set(baseline))
    now_passing = sorted(set(passed) & set(baseline))
    not_run = sorted(set(baseline) - set(scenarios))

    print(
        f"conformance: {len(scenarios)} scenarios: {len(passed)} passed, {len(failed)} failed "
        f"({len(expected)} expected by the baseline, {len(unexpected)} unexpected); "
        f"checks: {n_checks_ok} passed, {n_checks_bad} failed"
    )
    print(f"  passed: {', '.join(passed)}")
    for name in expected:
        print(f"  expected failure: {name}: {baseline[name]}")
    for name in now_passing:
        print(f"  NOTE: baselined scenario {name} now passes: remove it from {baseline_path.name}")
    for name in not_run:
        print(f"  NOTE: baselined scenario {name} did not run (renamed or dropped by the suite?)")
    for name in unexpected:
        for c in failed[name]:
            msg = c.get("errorMessage") or c.get("description")
            print(f"  UNEXPECTED FAILURE: {name} [{c.get('id')}]: {msg}")
    return 1 if unexpected else 0


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["inspector"] and len(argv) == 6:
            inspector(argv[1], Path(argv[2]), int(argv[3]), argv[4], argv[5])
            return 0
        if argv[:1] == ["case"] and len(argv) == 3 and argv[2] in ("error", "execute"):
            print(case(argv[1], argv[2]))
            return 0
        if argv[:1] == ["conformance"] and len(argv) == 4:
            return conformance(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    except Mismatch as exc:
        print(f"MISMATCH: {exc}")
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
