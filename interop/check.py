"""Checks for interop/run.sh: judge one MCP Inspector CLI output, or the conformance results.

    check.py inspector CHECK STDOUT_FILE EXIT_CODE   -> exit 0 and one line, or exit 1 and why
    check.py conformance RESULTS_DIR SUITE_STDOUT BASELINE

Standard library only. Every failure message says what was expected and what came instead.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

TOOLS = {
    "get_state",
    "read_back",
    "start_run",
    "run_events",
    "get_run",
    "cancel_run",
    "emergency_stop",
    "reset_estop",
    "confirm_state",
    "pick_up_tips",
    "aspirate",
    "dispense",
    "drop_tips",
    "transfer",
    "mix",
}
PROMPTS = {"serial_dilution", "recover_from_error"}


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


def check_tools_list(result: dict[str, Any]) -> str:
    names = {t.get("name") for t in result.get("tools") or []}
    missing = sorted(TOOLS - names)
    expect(not missing, f"tools/list lacks {missing}; got {sorted(n for n in names if n)}")
    for tool in result["tools"]:
        schema = tool.get("inputSchema") or {}
        expect(schema.get("type") == "object", f"{tool['name']}: inputSchema.type != object")
    return f"{len(names)} tools, all {len(TOOLS)} expected present"


def check_get_state(result: dict[str, Any]) -> str:
    expect(result.get("isError") is not True, f"get_state returned isError: {short(result)}")
    sc = tool_payload(result)
    expect(sc.get("ok") is True, f"get_state ok != true: {short(sc)}")
    state = sc.get("state") or {}
    expect(state.get("instrument") == "lh1", f"state.instrument != 'lh1': {short(state)}")
    expect("plate_1" in (state.get("labware") or {}), "state.labware lacks plate_1")
    return f"ok, {len(state['labware'])} labware"


def check_tool_error(result: dict[str, Any]) -> str:
    expect(result.get("isError") is True, f"expected isError true, got {short(result)}")
    sc = tool_payload(result)
    expect(sc.get("ok") is False, f"expected ok false: {short(sc)}")
    err = sc.get("error") or {}
    expect(err.get("code") == "UNKNOWN_LABWARE", f"expected UNKNOWN_LABWARE, got {short(err)}")
    for key in ("detail", "fix_hint", "retriable", "defined"):
        expect(key in err, f"error lacks {key!r}: {short(err)}")
    return "isError true, error.code UNKNOWN_LABWARE with detail and fix_hint"


def check_transfer(result: dict[str, Any]) -> str:
    expect(result.get("isError") is not True, f"transfer failed: {short(result)}")
    sc = tool_payload(result)
    expect(sc.get("ok") is True and sc.get("dry_run") is False, f"not executed: {short(sc)}")
    expect(sc.get("action_id") == "interop-transfer-1", f"action_id not echoed: {short(sc)}")
    dispensed = [
        e["data"]["well"]
        for e in sc.get("events") or []
        if e.get("type") == "liquid_transferred" and e["data"].get("op") == "dispense"
    ]
    expect(dispensed == ["A1", "A2"], f"expected dispenses into A1, A2; got {dispensed}")
    return "executed (dry_run false): 2 dispenses, action_id echoed"


def check_resource_state(result: dict[str, Any]) -> str:
    contents = result.get("contents") or []
    expect(len(contents) == 1, f"expected one content, got {short(contents)}")
    c = contents[0]
    expect(c.get("uri") == "lab://lh1/state", f"uri {c.get('uri')!r}")
    expect(c.get("mimeType") == "application/json", f"mimeType {c.get('mimeType')!r}")
    state = json.loads(c.get("text") or "null")
    expect(isinstance(state, dict) and state.get("instrument") == "lh1", "not lh1's state")
    # the server before this one executed the transfer: the state is persisted across restarts
    vol = state["labware"]["plate_1"]["wells"]["A1"]["volume_ul"]
    expect(abs(vol - 50) < 1e-6, f"plate_1:A1 holds {vol} uL, expected 50 (the transfer)")
    return "application/json, lh1's state, plate_1:A1 = 50 uL after the transfer"


def check_prompts_list(result: dict[str, Any]) -> str:
    names = {p.get("name") for p in result.get("prompts") or []}
    expect(names >= PROMPTS, f"prompts/list lacks {sorted(PROMPTS - names)}; got {sorted(names)}")
    return f"{len(names)} prompts: {', '.join(sorted(names))}"


SUCCESS_CHECKS = {
    "tools_list": check_tools_list,
    "get_state": check_get_state,
    "transfer": check_transfer,
    "resource_state": check_resource_state,
    "prompts_list": check_prompts_list,
}


def inspector(check: str, stdout: Path, rc: int) -> None:
    if check == "tool_error":
        # The inspector CLI exits non-zero (5) when a tool answers isError; the result is on stdout.
        print(check_tool_error(load_result(stdout)) + f" (inspector exit {rc})")
        return
    if check == "auth_rejected":
        raw = stdout.read_text() if stdout.exists() else ""
        expect(rc != 0, f"expected the call without a token to fail; exit 0, output {raw[:300]!r}")
        expect("result" not in raw, "a result came back without a token")
        print(f"refused without a token (inspector exit {rc})")
        return
    expect(rc == 0, f"the inspector exited {rc}")
    print(SUCCESS_CHECKS[check](load_result(stdout)))


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
        if argv[:1] == ["inspector"] and len(argv) == 4:
            inspector(argv[1], Path(argv[2]), int(argv[3]))
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
