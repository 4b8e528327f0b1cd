"""The HTTP API of ``labwright web``, through a real HTTP client against the real server
process: every operation, every role, missing / wrong / viewer tokens, stale approvals.
Refusals are asserted by their codes; outcomes by the runs' records and the audit log."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from _web import WebLab

pytestmark = pytest.mark.slow

ADD = "add 50 uL of buffer to plate_2 A1:A3"
READ = "add 100 uL of dye to plate_1 B1 then read absorbance of plate_1 at 600 nm"
HOT = "shake plate_2 at 65 C for 1 min at 600 rpm"  # above 60 C the shaker needs a person


def code(reply: httpx.Response) -> str:
    return str(reply.json()["error"]["code"])


def start(web: WebLab, request: str, role: str = "operator") -> str:
    with web.client(role) as http:
        reply = http.post("/api/runs", json={"request": request})
    assert reply.status_code == 202, reply.text
    return str(reply.json()["run_id"])


def waiting(web: WebLab, request: str) -> tuple[str, dict[str, Any]]:
    """A new run waiting for approval, and its question."""
    run_id = start(web, request)
    web.settled(run_id, "waiting_approval")
    with web.client("viewer") as http:
        return run_id, http.get(f"/api/runs/{run_id}").json()["question"]


def audit(web: WebLab, run_id: str) -> list[dict[str, Any]]:
    with web.client("viewer") as http:
        return list(http.get(f"/api/runs/{run_id}/audit").json()["entries"])


# --------------------------------------------------------------------------- tokens
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer lw_not-a-token"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer"},
        {"Cookie": "labwright_token=lw_wrong"},
    ],
)
def test_a_request_without_a_valid_token_is_unauthenticated(
    web_lab: WebLab, headers: dict[str, str]
) -> None:
    with httpx.Client(base_url=web_lab.url, headers=headers) as http:
        for method, path in (("GET", "/api/runs"), ("POST", "/api/runs"), ("POST", "/api/estop")):
            reply = http.request(method, path, json={"request": ADD})
            assert reply.status_code == 401, (method, path, reply.text)
            assert code(reply) == "UNAUTHENTICATED"


def test_a_token_that_is_not_ascii_is_refused_without_a_server_error(web_lab: WebLab) -> None:
    with httpx.Client(base_url=web_lab.url) as http:
        reply = http.get("/api/runs", headers=[(b"Authorization", b"Bearer lw_\xe9\xff")])
    assert reply.status_code == 401 and code(reply) == "UNAUTHENTICATED"


def test_a_request_for_another_host_name_is_refused(web_lab: WebLab) -> None:
    with web_lab.client("viewer") as http:
        reply = http.get("/api/runs", headers={"Host": "attacker.example"})
    assert reply.status_code == 400


def test_each_person_is_told_who_they_are(web_lab: WebLab) -> None:
    for role in ("approver", "operator", "viewer"):
        with web_lab.client(role) as http:
            assert http.get("/api/me").json() == {"name": f"{role}-1", "role": role, "via": "token"}


def test_a_viewer_reads_but_cannot_start_approve_or_reject(web_lab: WebLab) -> None:
    run_id, question = waiting(web_lab, ADD)
    with web_lab.client("viewer") as http:
        assert http.get("/api/runs").status_code == 200
        assert http.get(f"/api/runs/{run_id}/plan").json()["plan"]["steps"]
        for path, body in (
            ("/api/runs", {"request": ADD}),
            (f"/api/runs/{run_id}/approve", {"basis": question["basis"]}),
            (f"/api/runs/{run_id}/reject", {"reason": "no"}),
            (f"/api/runs/{run_id}/edit", {"request": ADD}),
            (f"/api/runs/{run_id}/answer", {"decision": "abort"}),
            ("/api/actions/approve", {"instrument": "hs1", "action_id": "x"}),
        ):
            reply = http.post(path, json=body)
            assert reply.status_code == 403 and code(reply) == "FORBIDDEN", (path, reply.text)
    assert web_lab.settled(run_id, "waiting_approval")["done"] == 0


def test_an_operator_cannot_approve(web_lab: WebLab) -> None:
    run_id, question = waiting(web_lab, ADD)
    with web_lab.client("operator") as http:
        reply = http.post(f"/api/runs/{run_id}/approve", json={"basis": question["basis"]})
    assert reply.status_code == 403 and code(reply) == "FORBIDDEN"


def test_a_page_cookie_write_without_the_page_header_is_refused(web_lab: WebLab) -> None:
    cookie = {"Cookie": f"labwright_token={web_lab.tokens['operator']}"}
    with httpx.Client(base_url=web_lab.url, headers=cookie) as http:
        assert http.get("/api/runs").status_code == 200
        forged = http.post("/api/runs", json={"request": ADD})
        assert forged.status_code == 403 and code(forged) == "FORBIDDEN"
        page = http.post("/api/runs", json={"request": ADD}, headers={"X-Labwright": "1"})
        assert page.status_code == 202


# --------------------------------------------------------------------------- a run's life
def test_an_approved_run_completes_and_every_decision_names_its_person(web_lab: WebLab) -> None:
    run_id, question = waiting(web_lab, READ)
    assert set(question["basis"]) == {"plan", "simulation", "policy", "twins"}
    with web_lab.client("viewer") as http:
        sim = http.get(f"/api/runs/{run_id}/simulation").json()["simulation"]
        assert sim["ok"] and sim["predictions"] and sim["verdicts"]
        assert {v["verdict"] for v in sim["verdicts"]} == {"ALLOW"}
        # The page draws the simulation's timeline: one bar per step, on its instrument's row.
        page = http.get(f"/runs/{run_id}").text
        assert page.count('<rect class="tl"') == len(sim["timeline"]["steps"]) == sim["steps"]
        assert "makespan " in page
    with web_lab.client("approver") as http:
        reply = http.post(f"/api/runs/{run_id}/approve", json={"basis": question["basis"]})
    assert reply.status_code == 202, reply.text
    done = web_lab.settled(run_id, "done", "failed", "waiting_person", "cancelled")
    assert done["status"] == "done" and done["done"] == done["steps"]
    with web_lab.client("viewer") as http:
        run = http.get(f"/api/runs/{run_id}").json()
        assert run["report"]["readings"][0]["plate"] == "plate_1"
        assert run["approval"]["record"]["by"] == "approver-1"
        verified = http.get("/api/audit/verify").json()
        assert verified["ok"] and verified["checked"] > 0
    who = {(e["tool"], e["agent"]) for e in audit(web_lab, run_id)}
    assert ("create_run", "person:operator-1 (operator)") in who
    assert ("answer", "person:approver-1 (approver)") in who
    assert ("approval_confirmed", "person:approver-1") in who


def test_a_rejection_needs_a_reason_and_moves_nothing(web_lab: WebLab) -> None:
    run_id, _ = waiting(web_lab, ADD)
    with web_lab.client("operator") as http:
        empty = http.post(f"/api/runs/{run_id}/reject", json={"reason": "  "})
        assert empty.status_code == 400 and code(empty) == "INVALID_ARGUMENT"
        assert (
            http.post(f"/api/runs/{run_id}/reject", json={"reason": "wrong plate"}).status_code
            == 202
        )
    assert web_lab.settled(run_id, "cancelled")["done"] == 0
    rejected = [e for e in audit(web_lab, run_id) if e["tool"] == "answer"]
    assert [(e["agent"], e["args"]["reason"]) for e in rejected] == [
        ("person:operator-1 (operator)", "wrong plate")
    ]
    assert not any(
        e["agent"].startswith("device:") and e["tool"] == "transfer" for e in audit(web_lab, run_id)
    )


def test_an_edit_asks_again_with_the_new_plan_and_the_old_one_beside_it(web_lab: WebLab) -> None:
    run_id, before = waiting(web_lab, ADD)
    with web_lab.client("operator") as http:
        edited = "add 50 uL of buffer to plate_2 A1:A6"
        assert http.post(f"/api/runs/{run_id}/edit", json={"request": edited}).status_code == 202
    web_lab.wait(run_id, lambda s: s["status"] == "waiting_approval" and not s["driving"])
    with web_lab.client("viewer") as http:
        run = http.get(f"/api/runs/{run_id}").json()
        view = http.get(f"/api/runs/{run_id}/view").json()
    assert run["question"]["basis"]["plan"] != before["basis"]["plan"]
    assert run["previous_plan"]["steps"] and run["plan"]["steps"]
    assert any(d["op"] == "+" for d in view["diff"]) and any(d["op"] == "-" for d in view["diff"])


def test_an_approval_of_a_plan_no_longer_shown_is_stale(web_lab: WebLab) -> None:
    run_id, question = waiting(web_lab, ADD)
    other = {**question["basis"], "plan": "0" * 64}
    with web_lab.client("approver") as http:
        reply = http.post(f"/api/runs/{run_id}/approve", json={"basis": other})
    assert reply.status_code == 409 and code(reply) == "APPROVAL_STALE"
    assert web_lab.settled(run_id, "waiting_approval")["done"] == 0


def test_an_approval_is_void_when_the_lab_changed_before_execution(web_lab: WebLab) -> None:
    first, question = waiting(web_lab, ADD)
    # Another run changes the liquid handler's wells while the first waits.
    second, other = waiting(web_lab, "add 20 uL of buffer to plate_2 H12")
    with web_lab.client("approver") as http:
        assert (
            http.post(f"/api/runs/{second}/approve", json={"basis": other["basis"]}).status_code
            == 202
        )
        assert web_lab.settled(second, "done")["status"] == "done"
        assert (
            http.post(f"/api/runs/{first}/approve", json={"basis": question["basis"]}).status_code
            == 202
        )
    web_lab.wait(first, lambda s: s["status"] == "waiting_approval" and not s["driving"])
    with web_lab.client("viewer") as http:
        asked = http.get(f"/api/runs/{first}").json()["question"]
    assert asked["voided"]["changed"] == ["twins"] and asked["basis"] != question["basis"]
    assert [e["tool"] for e in audit(web_lab, first)].count("approval_void") == 1
    with web_lab.client("approver") as http:
        assert (
            http.post(f"/api/runs/{first}/approve", json={"basis": asked["basis"]}).status_code
            == 202
        )
    assert web_lab.settled(first, "done", "failed", "waiting_person")["status"] == "done"


def test_an_instrument_s_pending_action_is_approved_then_an_escalation_is_answered(
    web_lab: WebLab,
) -> None:
    run_id, question = waiting(web_lab, HOT)
    assert question["needs_extra_approval"]
    with web_lab.client("approver") as http:
        http.post(f"/api/runs/{run_id}/approve", json={"basis": question["basis"]})
        web_lab.settled(run_id, "waiting_person")
        run = http.get(f"/api/runs/{run_id}").json()
        assert run["question"]["about"] == "approval_required"
        pending = http.get("/api/actions").json()["pending"]
        asked = [
            p for p in pending if p["action_id"] == run["question"]["observation"]["action_id"]
        ]
        assert asked and {"args", "args_hash", "state", "requested_by"} <= set(asked[0])
        other = {"instrument": asked[0]["instrument"], "action_id": asked[0]["action_id"]}
        swapped = http.post("/api/actions/approve", json={**other, "args_hash": "0" * 64})
        assert swapped.status_code == 409 and code(swapped) == "ACTION_ID_REUSED"
        with web_lab.client("operator") as op:
            refused = op.post(f"/api/runs/{run_id}/approve-action")
            assert refused.status_code == 403 and code(refused) == "FORBIDDEN"
        assert http.post(f"/api/runs/{run_id}/approve-action").status_code == 202
        web_lab.wait(run_id, lambda s: not s["driving"] and s["status"] != "running")
        after = http.get(f"/api/runs/{run_id}").json()
        if after["status"] == "waiting_person":  # a later step asks again: abort it
            assert (
                http.post(f"/api/runs/{run_id}/answer", json={"decision": "abort"}).status_code
                == 202
            )
            web_lab.settled(run_id, "cancelled")
    granted = [e for e in audit(web_lab, "lab") if e["tool"] == "approve_action"]
    assert granted and granted[-1]["agent"] == "person:approver-1 (approver)"


def test_bad_input_gets_a_code_not_a_server_error(web_lab: WebLab) -> None:
    run_id, _ = waiting(web_lab, ADD)
    with web_lab.client("approver") as http:
        cases = [
            (http.post("/api/runs", content=b"{not json"), 400, "INVALID_ARGUMENT"),
            (http.post("/api/runs", json=["a list"]), 400, "INVALID_ARGUMENT"),
            (http.post("/api/runs", json={"request": ""}), 400, "INVALID_ARGUMENT"),
            (http.post("/api/runs", json={"request": "x" * 5000}), 400, "INVALID_ARGUMENT"),
            (
                http.post("/api/runs", content=b'{"request": "add \\ud800"}'),
                400,
                "INVALID_ARGUMENT",
            ),
            (http.get("/api/runs/no-such-run"), 404, "RUN_NOT_FOUND"),
            (http.get("/api/runs/no-such-run/stream"), 404, "RUN_NOT_FOUND"),
            (http.get("/api/runs?limit=many"), 400, "INVALID_ARGUMENT"),
            (http.get("/api/runs?status=sleeping"), 400, "INVALID_ARGUMENT"),
            (
                http.post(f"/api/runs/{run_id}/answer", json={"decision": "maybe"}),
                400,
                "INVALID_ARGUMENT",
            ),
            (
                http.post(f"/api/runs/{run_id}/answer", json={"decision": "retry"}),
                409,
                "NOT_WAITING",
            ),
            (
                http.post(f"/api/runs/{run_id}/approve", json={"basis": "abc"}),
                400,
                "INVALID_ARGUMENT",
            ),
            (
                http.post("/api/actions/approve", json={"instrument": "hs1", "action_id": "none"}),
                409,
                "NOT_WAITING",
            ),
        ]
    for reply, status, expected in cases:
        assert (reply.status_code, code(reply)) == (status, expected), reply.request.url
