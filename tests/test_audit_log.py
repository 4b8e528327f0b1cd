"""The audit log: a hash chain that shows any edited, deleted, reordered or forged row."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from device_servers.lab import load
from state_store import AuditLog, TaskRuns, VerifyReport, connect
from state_store.audit import row_hash
from tests.conftest import ROOT, labwright

GENESIS = "0" * 64
COLUMNS = (
    "seq",
    "ts",
    "run_id",
    "agent",
    "model",
    "tool",
    "args",
    "state_before",
    "state_after",
    "decision_note",
    "result",
    "prev_hash",
)


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    return connect(tmp_path / "lab.sqlite")


@pytest.fixture
def log(conn: sqlite3.Connection) -> AuditLog:
    return AuditLog(conn)


def fill(log: AuditLog, n: int = 6) -> None:
    """``n`` entries alternating between runs r1 and r2; seq 1, 3, 5 are r1's."""
    for i in range(n):
        log.append(
            run_id=f"r{i % 2 + 1}",
            agent="device:lh1",
            model="fake:scripted" if i % 3 else None,
            tool="aspirate",
            args={"well": f"A{i + 1}", "volume_ul": 10 * (i + 1)},
            state_before={"A1": 100 - i},
            state_after={"A1": 90 - i},
            decision_note=f"step {i}",
            result={"ok": True, "volume_ul": 10},
        )


def tamper(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> None:
    """Edit the file the way someone bypassing Labwright would: drop the guards, run SQL."""
    conn.execute("DROP TRIGGER IF EXISTS audit_log_no_update")
    conn.execute("DROP TRIGGER IF EXISTS audit_log_no_delete")
    conn.execute(sql, params)


def found(report: VerifyReport) -> set[tuple[int, str]]:
    return {(p.seq, p.kind) for p in report.problems}


def raw_row(conn: sqlite3.Connection, seq: int) -> dict[str, Any]:
    row = conn.execute("SELECT * FROM audit_log WHERE seq=?", (seq,)).fetchone()
    return dict(row)


# --- the chain as written -------------------------------------------------------------------


def test_each_row_hashes_its_canonical_fields_and_links_to_the_previous_hash(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    prev = GENESIS
    for seq in range(1, 7):
        row = raw_row(conn, seq)
        assert row["prev_hash"] == prev
        canonical = json.dumps(
            {k: row[k] for k in COLUMNS}, sort_keys=True, separators=(",", ":")
        ).encode()
        assert row["hash"] == hashlib.sha256(canonical).hexdigest()
        prev = row["hash"]
    head = conn.execute("SELECT seq, hash FROM audit_head").fetchall()
    assert [tuple(h) for h in head] == [(6, prev)]


def test_append_returns_the_entry_exactly_as_it_is_read_back(log: AuditLog) -> None:
    entry = log.append(
        run_id="r1",
        agent="task",
        model="openai:gpt-x",
        tool="dispense",
        args={"b": [1, 2], "a": "x"},
        state_before=None,
        state_after={"A1": 5.0},
        decision_note="continue: observed matches expected",
        result={"ok": False, "error": {"code": "NO_TIP"}},
    )
    assert log.entries() == [entry]
    assert entry.seq == 1 and entry.prev_hash == GENESIS
    assert entry.args == {"a": "x", "b": [1, 2]}
    assert entry.state_before is None
    assert entry.outcome == "NO_TIP"


def test_outcome_reads_ok_an_error_code_or_nothing(log: AuditLog) -> None:
    ok = log.append(run_id="r", agent="a", tool="t", args={}, result={"ok": True})
    none = log.append(run_id="r", agent="a", tool="t", args={})
    assert (ok.outcome, none.outcome) == ("ok", "-")


def test_entries_of_one_run_are_that_runs_rows_in_chain_order(log: AuditLog) -> None:
    fill(log)
    assert [e.seq for e in log.entries("r1")] == [1, 3, 5]
    assert [e.seq for e in log.entries("r2")] == [2, 4, 6]
    assert log.entries("nobody") == []
    assert (log.count(), log.count("r1")) == (6, 3)


def test_an_untouched_log_verifies_intact_for_the_whole_log_and_for_each_run(
    log: AuditLog,
) -> None:
    fill(log)
    whole, one = log.verify(), log.verify("r1")
    assert whole.ok and whole.problems == () and (whole.entries, whole.checked) == (6, 6)
    assert one.ok and (one.entries, one.checked) == (3, 6)


def test_an_empty_log_verifies_intact(log: AuditLog) -> None:
    report = log.verify()
    assert report.ok and report.checked == 0


def test_an_append_inside_the_callers_transaction_rolls_back_with_it(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log, 2)
    conn.execute("BEGIN")
    log.append(run_id="r1", agent="a", tool="t", args={})
    conn.execute("ROLLBACK")
    assert log.count() == 2
    assert log.verify().ok
    assert log.append(run_id="r1", agent="a", tool="t", args={}).seq == 3
    assert log.verify().ok


def test_the_database_refuses_to_update_or_delete_audit_rows(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log, 2)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE audit_log SET tool='forged' WHERE seq=1")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("DELETE FROM audit_log WHERE seq=2")
    assert log.verify().ok


# --- edits ----------------------------------------------------------------------------------

EDITS: dict[str, Any] = {
    "ts": 1.5,
    "run_id": "r9",
    "agent": "forged",
    "model": "forged:model",
    "tool": "forged",
    "args": '{"volume_ul":999}',
    "state_before": '{"A1":0}',
    "state_after": '{"A1":0}',
    "decision_note": "forged",
    "result": '{"ok":true}',
    "prev_hash": "f" * 64,
    "hash": "e" * 64,
}


@pytest.mark.parametrize("seq", [1, 3, 6])
@pytest.mark.parametrize("column", sorted(EDITS))
def test_editing_any_field_of_any_row_is_detected_at_that_seq(
    conn: sqlite3.Connection, log: AuditLog, column: str, seq: int
) -> None:
    fill(log)
    assert raw_row(conn, seq)[column] != EDITS[column]
    tamper(conn, f"UPDATE audit_log SET {column}=? WHERE seq=?", (EDITS[column], seq))
    report = log.verify()
    assert not report.ok
    assert (seq, "hash_mismatch") in found(report)


def test_a_row_edited_with_a_recomputed_hash_breaks_the_next_link(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    row = raw_row(conn, 3)
    row["args"] = '{"volume_ul":999}'
    tamper(conn, "UPDATE audit_log SET args=?, hash=? WHERE seq=3", (row["args"], row_hash(row)))
    assert found(log.verify()) == {(4, "broken_link"), (3, "anchor_mismatch")}


def test_swapping_two_rows_seqs_is_detected_at_both(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    tamper(conn, "UPDATE audit_log SET seq=-2 WHERE seq=2")
    tamper(conn, "UPDATE audit_log SET seq=2 WHERE seq=4")
    tamper(conn, "UPDATE audit_log SET seq=4 WHERE seq=-2")
    problems = found(log.verify())
    assert {(2, "hash_mismatch"), (4, "hash_mismatch")} <= problems


def test_renumbering_a_row_is_detected_where_it_was_and_where_it_went(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    tamper(conn, "UPDATE audit_log SET seq=103 WHERE seq=3")
    problems = found(log.verify())
    assert {(4, "missing_rows"), (103, "hash_mismatch")} <= problems


# --- deletions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deleted", "where"),
    [
        (1, {(2, "missing_rows")}),
        (3, {(4, "missing_rows")}),
        (6, {(6, "head_mismatch"), (6, "anchor_ahead")}),
    ],
    ids=["first", "middle", "last"],
)
def test_deleting_a_row_is_detected(
    conn: sqlite3.Connection, log: AuditLog, deleted: int, where: set[tuple[int, str]]
) -> None:
    fill(log)
    tamper(conn, "DELETE FROM audit_log WHERE seq=?", (deleted,))
    report = log.verify()
    assert found(report) == where
    assert report.checked == 5


def test_a_truncation_stays_visible_after_later_appends(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    tamper(conn, "DELETE FROM audit_log WHERE seq>=5")
    entry = log.append(run_id="r1", agent="a", tool="t", args={})
    assert entry.seq == 7
    assert found(log.verify()) == {(7, "missing_rows")}


def test_deleting_the_head_record_is_detected(conn: sqlite3.Connection, log: AuditLog) -> None:
    fill(log)
    conn.execute("DELETE FROM audit_head")
    assert found(log.verify()) == {(6, "head_mismatch")}


def test_a_deleted_row_of_another_run_fails_this_runs_verification_too(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    """A deleted row's run is unknowable, so a break anywhere is reported for every run."""
    fill(log)
    tamper(conn, "DELETE FROM audit_log WHERE seq=2")  # r2's
    report = log.verify("r1")
    assert not report.ok
    assert [(p.seq, p.kind, p.run_id) for p in report.problems] == [(3, "missing_rows", "r1")]
    assert report.touching() == report.problems
    assert log.verify("r2").touching() == ()


# --- forgeries ------------------------------------------------------------------------------


def forged_row(conn: sqlite3.Connection, seq: int, prev_hash: str) -> dict[str, Any]:
    row = dict.fromkeys(COLUMNS, None) | {
        "seq": seq,
        "ts": 2.0,
        "run_id": "r1",
        "agent": "forger",
        "tool": "dispense",
        "args": "{}",
        "decision_note": "",
        "prev_hash": prev_hash,
    }
    row["hash"] = row_hash(row)
    cols = ", ".join(row)
    conn.execute(
        f"INSERT INTO audit_log ({cols}) VALUES ({', '.join('?' * len(row))})", (*row.values(),)
    )
    return row


def test_a_forged_row_appended_around_the_log_is_detected_even_with_a_valid_hash(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    forged_row(conn, 7, raw_row(conn, 6)["hash"])
    assert found(log.verify()) == {(6, "head_mismatch"), (7, "unanchored")}
    # The next real append chains onto the head, so the forgery stays visible.
    log.append(run_id="r1", agent="a", tool="t", args={})
    assert (8, "broken_link") in found(log.verify())


def test_a_row_replaced_by_a_forgery_with_a_valid_hash_breaks_the_next_link(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    tamper(conn, "DELETE FROM audit_log WHERE seq=3")
    forged_row(conn, 3, raw_row(conn, 2)["hash"])
    assert found(log.verify()) == {(4, "broken_link"), (3, "anchor_mismatch")}


# --- the anchor outside the database -------------------------------------------------------


def anchor_of(conn: sqlite3.Connection) -> Path:
    return Path(conn.execute("PRAGMA database_list").fetchone()[2] + ".audit-anchor")


def rehash_from(conn: sqlite3.Connection, seq: int) -> None:
    """Recompute every hash from ``seq`` on and the head: a chain that verifies on its own."""
    prev = raw_row(conn, seq - 1)["hash"] if seq > 1 else GENESIS
    for (s,) in conn.execute("SELECT seq FROM audit_log WHERE seq>=? ORDER BY seq", (seq,)):
        row = raw_row(conn, s) | {"prev_hash": prev}
        prev = row_hash(row)
        tamper(
            conn,
            "UPDATE audit_log SET prev_hash=?, hash=? WHERE seq=?",
            (row["prev_hash"], prev, s),
        )
    last = conn.execute("SELECT MAX(seq) FROM audit_log").fetchone()[0]
    tamper(conn, "UPDATE audit_head SET seq=?, hash=?", (last, prev))


def test_rows_cut_off_the_end_together_with_the_head_are_detected(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    tamper(conn, "DELETE FROM audit_log WHERE seq>=5")
    tamper(conn, "UPDATE audit_head SET seq=4, hash=?", (raw_row(conn, 4)["hash"],))
    assert found(log.verify()) == {(6, "anchor_ahead")}  # the chain alone says intact


def test_a_truncation_with_a_moved_head_stays_visible_after_later_appends(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    tamper(conn, "DELETE FROM audit_log WHERE seq>=5")
    tamper(conn, "UPDATE audit_head SET seq=4, hash=?", (raw_row(conn, 4)["hash"],))
    for _ in range(3):
        log.append(run_id="r1", agent="a", tool="t", args={})
    assert found(log.verify()) == {(5, "anchor_mismatch")}


def test_a_row_edited_with_every_later_hash_and_the_head_recomputed_is_detected(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    tamper(conn, "UPDATE audit_log SET args=? WHERE seq=3", ('{"volume_ul":999}',))
    rehash_from(conn, 3)
    assert found(log.verify()) == {(3, "anchor_mismatch")}


def test_a_forged_row_added_with_a_valid_chain_and_head_is_detected(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    forged = forged_row(conn, 7, raw_row(conn, 6)["hash"])
    tamper(conn, "UPDATE audit_head SET seq=7, hash=?", (forged["hash"],))
    assert found(log.verify()) == {(7, "unanchored")}
    log.append(run_id="r1", agent="a", tool="t", args={})  # later appends do not launder it
    assert found(log.verify()) == {(7, "unanchored")}


def test_a_deleted_anchor_leaves_every_row_unanchored(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    anchor_of(conn).unlink()
    assert found(log.verify()) == {(1, "unanchored")}


def test_an_edited_or_garbled_anchor_line_is_detected(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    path = anchor_of(conn)
    lines = [
        ln.replace(ln.split()[1], "a" * 64) if ln.startswith("2 ") else ln
        for ln in path.read_text().splitlines()
    ]
    path.write_text("\n".join([*lines, "not an anchor line"]) + "\n")
    assert found(log.verify()) == {(2, "anchor_mismatch"), (13, "anchor_unreadable")}


def test_an_intact_log_verifies_against_its_anchor_and_reports_the_head(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    report = log.verify()
    assert report.ok, report.problems
    assert report.anchor is not None
    assert (report.anchor.last_seq, report.anchor.last_hash) == (6, raw_row(conn, 6)["hash"])
    assert report.anchor.adopted_at is None


def test_a_crash_between_the_commit_and_the_anchor_line_leaves_the_row_anchored(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    path = anchor_of(conn)
    lines = path.read_text().splitlines()
    assert lines[-1].split()[0] == "6" and lines[-2].endswith(" intent")
    path.write_text("\n".join(lines[:-1]) + "\n")  # the committed line never written
    assert log.verify().ok
    log.append(run_id="r1", agent="a", tool="t", args={})
    assert log.verify().ok


def test_an_append_rolled_back_with_its_callers_transaction_vouches_for_nothing(
    conn: sqlite3.Connection, log: AuditLog
) -> None:
    fill(log)
    conn.execute("BEGIN IMMEDIATE")
    log.append(run_id="r1", agent="a", tool="rolled_back", args={})
    conn.execute("ROLLBACK")
    log.append(run_id="r1", agent="a", tool="kept", args={})  # seq 7 again, another hash
    assert log.verify().ok
    conn.execute("BEGIN IMMEDIATE")
    log.append(run_id="r1", agent="a", tool="committed_by_caller", args={})
    conn.execute("COMMIT")
    assert log.verify().ok  # its intent line anchors it


def test_a_log_older_than_its_anchor_is_adopted_at_its_head(tmp_path: Path) -> None:
    db = tmp_path / "lab.sqlite"
    log = AuditLog(connect(db))
    fill(log)
    anchor_of(log.conn).unlink()  # as a database written before anchors existed
    log.append(run_id="r1", agent="a", tool="t", args={})
    report = log.verify()
    assert report.ok, report.problems
    assert report.anchor is not None and report.anchor.adopted_at == 6
    tamper(log.conn, "UPDATE audit_log SET args=? WHERE seq=2", ('{"x":1}',))
    rehash_from(log.conn, 2)
    assert (6, "anchor_mismatch") in found(log.verify())  # the adopted head differs


# --- concurrency ----------------------------------------------------------------------------

WRITER = """
import sys
from state_store import AuditLog, connect
log = AuditLog(connect(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
for i in range(int(sys.argv[3])):
    log.append(run_id=sys.argv[2], agent="writer", tool="t", args={"i": i})
"""


@pytest.mark.slow
def test_two_processes_appending_at_once_keep_one_valid_chain(tmp_path: Path) -> None:
    db, n = tmp_path / "lab.sqlite", 150
    connect(db).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), run, str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for run in ("w1", "w2")
    ]
    try:
        for p in procs:  # both connected before either starts: the appends overlap
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        errors = [p.communicate(timeout=60)[1] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0], errors
    log = AuditLog(connect(db))
    report = log.verify()
    assert report.ok, report.problems  # the anchor too: every row has its line
    assert report.anchor is not None and report.anchor.last_seq == 2 * n
    assert [e.seq for e in log.entries()] == list(range(1, 2 * n + 1))
    for run in ("w1", "w2"):
        assert [e.args["i"] for e in log.entries(run)] == list(range(n))


# --- the CLI --------------------------------------------------------------------------------

WIDE = {"COLUMNS": "200"}


def lab_db(lab_file: Path) -> sqlite3.Connection:
    return connect(load(lab_file).db_path)


def test_audit_lists_a_runs_entries_as_a_table(lab_file: Path) -> None:
    log = AuditLog(lab_db(lab_file))
    log.append(run_id="r1", agent="device:lh1", tool="pick_up_tips", args={}, result={"ok": True})
    log.append(run_id="r2", agent="device:lh1", tool="other_runs_tool", args={})
    log.append(
        run_id="r1",
        agent="task",
        tool="aspirate",
        args={"well": "A1"},
        decision_note="escalate: [two] failures",
        result={"ok": False, "error": {"code": "NO_TIP"}},
    )
    res = labwright("audit", "r1", "-c", str(lab_file), env=WIDE)
    assert res.returncode == 0, res.stderr
    assert "pick_up_tips" in res.stdout and "aspirate" in res.stdout
    assert "NO_TIP" in res.stdout and "escalate: [two] failures" in res.stdout
    assert "other_runs_tool" not in res.stdout


def test_audit_verify_of_an_intact_chain_says_so_and_exits_0(lab_file: Path) -> None:
    fill(AuditLog(lab_db(lab_file)))
    res = labwright("audit", "r1", "--verify", "-c", str(lab_file), env=WIDE)
    assert res.returncode == 0, res.stderr
    assert "audit chain intact (3 entries)" in res.stdout
    head = raw_row(lab_db(lab_file), 6)["hash"]
    assert f"seq 6, head {head}" in res.stdout  # the anchored head, to write down elsewhere


def test_audit_verify_detects_a_truncation_together_with_its_head(lab_file: Path) -> None:
    conn = lab_db(lab_file)
    fill(AuditLog(conn))
    tamper(conn, "DELETE FROM audit_log WHERE seq>=5")
    tamper(conn, "UPDATE audit_head SET seq=4, hash=?", (raw_row(conn, 4)["hash"],))
    res = labwright("audit", "r1", "--verify", "-c", str(lab_file), env=WIDE)
    assert res.returncode == 1
    assert "anchor_ahead" in res.stdout


def test_audit_verify_of_a_broken_chain_lists_each_problem_and_exits_1(lab_file: Path) -> None:
    conn = lab_db(lab_file)
    fill(AuditLog(conn))
    tamper(conn, "DELETE FROM audit_log WHERE seq=3")
    tamper(conn, "UPDATE audit_log SET args='not json', ts='yesterday' WHERE seq=5")
    res = labwright("audit", "r1", "--verify", "-c", str(lab_file), env=WIDE)
    assert res.returncode == 1, res.stderr
    assert "seq 4 missing_rows" in res.stdout and "seq 5 hash_mismatch" in res.stdout
    assert "Traceback" not in res.stderr


def test_audit_of_a_task_run_without_entries_shows_an_empty_table(lab_file: Path) -> None:
    TaskRuns(lab_db(lab_file)).create("read plate_1", run_id="r7")
    res = labwright("audit", "r7", "--verify", "-c", str(lab_file), env=WIDE)
    assert res.returncode == 0, res.stderr
    assert "audit chain intact (0 entries)" in res.stdout


def test_audit_of_an_unknown_run_exits_2_without_a_traceback(lab_file: Path) -> None:
    no_db = labwright("audit", "nope", "-c", str(lab_file))
    fill(AuditLog(lab_db(lab_file)))
    no_run = labwright("audit", "nope", "--verify", "-c", str(lab_file))
    for res in (no_db, no_run):
        assert res.returncode == 2, res.stderr
        assert "unknown run" in res.stderr and "Traceback" not in res.stderr
