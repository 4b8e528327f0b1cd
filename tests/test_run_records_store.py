"""state_store.blobs and state_store.observations: values by hash, observations by cursor."""

from __future__ import annotations

from pathlib import Path

import pytest

from state_store import connect
from state_store.blobs import BlobError, Blobs, content_hash
from state_store.observations import ObservationLog


def test_a_value_is_stored_once_under_the_hash_of_its_canonical_json(tmp_path: Path) -> None:
    blobs = Blobs(connect(tmp_path / "lab.sqlite"))
    ref = blobs.put("plan", {"b": [1, 2], "a": "x"})
    same = {"a": "x", "b": [1, 2]}
    assert ref == blobs.put("plan", same) == content_hash(same)
    assert ref.startswith("sha256:") and len(ref) == len("sha256:") + 64
    assert blobs.get(ref) == {"a": "x", "b": [1, 2]}
    assert blobs.conn.execute("SELECT count(*) FROM task_blobs").fetchone()[0] == 1
    assert ref in blobs and content_hash({"a": "y"}) not in blobs


def test_an_unknown_reference_or_a_changed_value_is_refused(tmp_path: Path) -> None:
    blobs = Blobs(connect(tmp_path / "lab.sqlite"))
    with pytest.raises(BlobError):
        blobs.get(content_hash("never stored"))
    ref = blobs.put("simulation", {"ok": True, "steps": 3})
    changed = '{"ok":true,"steps":4}'
    blobs.conn.execute("UPDATE task_blobs SET body = ? WHERE ref = ?", (changed, ref))
    with pytest.raises(BlobError):
        blobs.get(ref)


def test_a_part_of_a_value_is_read_as_the_whole_value_has_it_and_checked_as_strictly(
    tmp_path: Path,
) -> None:
    blobs = Blobs(connect(tmp_path / "lab.sqlite"))
    value = {
        "ok": True,
        "failed": False,
        "error": None,
        "steps": 3,
        "duration_s": 1.5,
        "summary": "dispensed",
        "timeline": {"steps": [{"step": "s1", "after": []}, {"step": "s2", "after": ["s1"]}]},
    }
    ref = blobs.put("simulation", value)
    for keys in (
        ["ok"],
        ["failed"],
        ["error"],
        ["steps"],
        ["duration_s"],
        ["summary"],
        ["timeline"],
        ["timeline", "steps"],
    ):
        part = blobs.part(ref, *keys)
        whole: object = value
        for key in keys:
            whole = whole[key]  # type: ignore[index]
        assert part == whole and type(part) is type(whole)
    assert blobs.part(ref, "missing") is None and blobs.part(ref, "timeline", "missing") is None
    assert blobs.part(ref, "ok", "deeper") is None
    blobs.conn.execute(
        "UPDATE task_blobs SET body = replace(body, '\"s2\"', '\"s9\"') WHERE ref = ?", (ref,)
    )
    with pytest.raises(BlobError):
        blobs.part(ref, "timeline", "steps")
    with pytest.raises(BlobError):
        blobs.part(content_hash("never stored"), "ok")


def obs(step_id: str, ok: bool = True, **extra: object) -> dict[str, object]:
    return {"step_id": step_id, "action_id": f"run-1/{step_id}/cmd", "ok": ok, **extra}


def test_observations_are_read_back_in_recording_order_page_by_page(tmp_path: Path) -> None:
    log = ObservationLog(connect(tmp_path / "lab.sqlite"))
    for seq in range(7):
        log.record("run-1", "main", seq, obs(f"s{seq + 1}"))
        log.record("run-2", "main", seq, obs(f"other{seq}"))
    page, cursor = log.read("run-1", limit=3)
    assert [r.step_id for r in page] == ["s1", "s2", "s3"]
    page, cursor = log.read("run-1", cursor, limit=3)
    assert [r.seq for r in page] == [3, 4, 5]
    page, cursor = log.read("run-1", cursor, limit=3)
    assert [r.seq for r in page] == [6]
    assert log.read("run-1", cursor) == ([], cursor)
    assert [r.step_id for r in log.all("run-1")] == [f"s{i}" for i in range(1, 8)]
    assert log.count("run-1") == 7 and log.count("nobody") == 0


def test_recording_again_at_the_cursor_replaces_and_behind_it_is_refused(tmp_path: Path) -> None:
    log = ObservationLog(connect(tmp_path / "lab.sqlite"))
    log.record("run-1", "main", 0, obs("s1", ok=False, transport_error="pipe closed"))
    # The node re-run after a crash asked the same action id again: its answer replaces.
    log.record("run-1", "main", 0, obs("s1", replayed=True))
    log.record("run-1", "main", 1, obs("s2"))
    got = log.get("run-1", "main", 0)
    assert got is not None and got.ok and got.body["replayed"] is True
    # Behind the cursor: the same action again (a replay) is recorded, another is refused.
    log.record("run-1", "main", 0, obs("s1", replayed=True, note="replay"))
    with pytest.raises(ValueError):
        log.record("run-1", "main", 0, obs("s7"))
    # Lanes (parallel branches) keep their own cursors.
    log.record("run-1", "hs1", 0, obs("s9"))
    assert [(r.lane, r.seq) for r in log.all("run-1")] == [("main", 0), ("main", 1), ("hs1", 0)]
