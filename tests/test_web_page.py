"""The approval page in a real headless Chromium against the real ``labwright web`` process:
open a waiting run, see its steps and deck, approve, watch it to done, see the heatmap;
reject with a reason; press the e-stop during a step and see it stop. Every wait is bounded
and watches the page's own state.

``LABWRIGHT_SCREENSHOTS=DIR`` also saves the pages as PNG files there (``make screenshots``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from _browser import Browser, available, chromium
from _web import WebLab, serve_web, web_lab_file

from device_servers.lab import load
from device_servers.sim.world import SimWorld

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not available(), reason="chromium and chromium-driver are not installed"),
]

READ = "add 100 uL of dye to plate_1 C1 then read absorbance of plate_1 at 600 nm"
SHOTS = os.environ.get("LABWRIGHT_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


def shot(browser: Browser, name: str, css: str | None = None) -> None:
    if SHOTS:
        browser.js("document.querySelector('header.top').style.position = 'static'")
        browser.screenshot(Path(SHOTS) / name, css)


def sign_in(browser: Browser, web: WebLab, role: str) -> None:
    browser.get(f"{web.url}/")
    browser.js("return fetch('/logout', {method: 'POST'}).then(() => true)")  # a fresh start
    browser.get(f"{web.url}/")
    browser.wait_js("the sign-in form", "return document.querySelector('#token') !== null")
    browser.type("#token", web.tokens[role])
    browser.click("#login-form button")
    browser.wait_js("the runs list", "return document.querySelector('#runs') !== null")


def open_run(browser: Browser, web: WebLab, run_id: str) -> None:
    browser.get(f"{web.url}/runs/{run_id}")
    browser.wait_js("the run page", "return document.body.dataset.ready === 'true'")


def status_is(browser: Browser, *statuses: str, timeout: float = 90.0) -> str:
    script = "const b = document.querySelector('#run-status'); return b && b.dataset.status"
    return str(
        browser.wait(
            f"status {' or '.join(statuses)}",
            lambda: (s := browser.js(script)) in statuses and s,
            timeout,
        )
    )


def new_run(web: WebLab, request: str) -> str:
    with web.client("operator") as http:
        reply = http.post("/api/runs", json={"request": request})
    assert reply.status_code == 202, reply.text
    run_id = str(reply.json()["run_id"])
    web.settled(run_id, "waiting_approval")
    return run_id


def test_a_waiting_run_is_approved_on_the_page_and_ends_with_a_heatmap(
    web_lab: WebLab, browser: Browser
) -> None:
    run_id = new_run(web_lab, READ)
    sign_in(browser, web_lab, "approver")
    open_run(browser, web_lab, run_id)
    assert status_is(browser, "waiting_approval")
    steps = browser.js("return document.querySelectorAll('#steps tr[data-step]').length")
    with web_lab.client("viewer") as http:
        assert steps == len(http.get(f"/api/runs/{run_id}/plan").json()["plan"]["steps"])
    assert browser.js("return document.querySelectorAll('svg.deck .well').length") > 96
    assert browser.js("return document.querySelectorAll('svg.deck .tip.present').length") > 0
    # Before the run C1 is empty; at the end of the slider it holds the dye.
    c1 = (
        'return document.querySelector(\'.well[data-lw="plate_1"][data-well="C1"]\').dataset.volume'
    )
    assert browser.js(c1) == "0"
    browser.js(
        "const s = document.querySelector('.step-slider'); s.value = s.max;"
        "s.dispatchEvent(new Event('input'))"
    )
    assert float(browser.js(c1)) == pytest.approx(100.0)
    assert "ALLOW" in browser.js("return document.querySelector('#steps').textContent")
    shot(browser, "web-approval.png")
    shot(browser, "web-deck.png", ".deck-card")

    browser.click("#approve")
    assert status_is(browser, "done", "failed", "waiting_person") == "done"
    browser.wait_js("the heatmap", "return document.querySelectorAll('table.heatmap td.hm').length")
    assert browser.js("return document.querySelectorAll('table.heatmap td.hm').length") == 96
    coloured = (
        "return [...document.querySelectorAll('td.hm')].filter(t => t.style.background).length"
    )
    assert browser.js(coloured) == 96
    assert browser.js("return document.querySelector('#chain').dataset.ok") == "true"
    done = (
        "return [...document.querySelectorAll('#steps tr[data-step]')]"
        ".every(t => t.dataset.state === 'done')"
    )
    assert browser.js(done)
    shot(browser, "web-done.png")


def test_a_rejection_on_the_page_needs_a_reason_and_cancels_the_run(
    web_lab: WebLab, browser: Browser
) -> None:
    run_id = new_run(web_lab, "add 30 uL of buffer to plate_2 D1:D4")
    sign_in(browser, web_lab, "operator")
    open_run(browser, web_lab, run_id)
    assert browser.js("return document.querySelector('#approve').disabled") is True
    browser.click("#reject")
    said = "return document.querySelector('#decision-error').textContent"
    assert "reason" in browser.wait("the missing reason", lambda: browser.js(said))
    assert status_is(browser, "waiting_approval")
    browser.type("#reject-reason", "plate_2 is reserved")
    browser.click("#reject")
    assert status_is(browser, "cancelled") == "cancelled"
    assert "plate_2 is reserved" in browser.js(
        "return document.querySelector('#audit').textContent"
    )


@pytest.fixture
def slow_lab(tmp_path: Path) -> Iterator[WebLab]:
    """A lab of its own (it is e-stopped) whose heater-shaker takes real seconds to heat."""
    with serve_web(web_lab_file(tmp_path, hs_time_scale=4)) as served:
        yield served


def test_the_e_stop_pressed_during_a_step_stops_it(slow_lab: WebLab, browser: Browser) -> None:
    run_id = new_run(slow_lab, "shake plate_1 at 45 C for 5 min at 600 rpm")
    with slow_lab.client("approver") as http:
        basis = http.get(f"/api/runs/{run_id}").json()["question"]["basis"]
        assert http.post(f"/api/runs/{run_id}/approve", json={"basis": basis}).status_code == 202
    sign_in(browser, slow_lab, "viewer")  # stopping is never a privilege
    open_run(browser, slow_lab, run_id)
    heating = (
        "const r = document.querySelector('#steps tr[data-state=\"current\"]');"
        "return r && r.children[2].textContent"
    )
    step = browser.wait(
        "a heater-shaker step running",
        lambda: browser.js(heating) in ("wait_for_temperature", "shake") and browser.js(heating),
        60,
    )
    browser.click("#estop")
    said = "return document.querySelector('#estop-result').textContent"
    assert "hs1" in browser.wait("the e-stop's answer", lambda: browser.js(said), 10)
    stopped = status_is(browser, "waiting_person", "failed", "cancelled", timeout=30)
    assert stopped in ("waiting_person", "failed"), stopped
    latched = browser.wait_js(
        "the latched e-stop",
        "const e = document.querySelector('#estopped'); return e && e.textContent",
        30,
    )
    assert "hs1" in latched
    shot(browser, "web-estop.png")
    with slow_lab.client("viewer") as http:
        run = http.get(f"/api/runs/{run_id}").json()
        lab_audit = http.get("/api/runs/lab/audit").json()["entries"]
    assert run["report"] is None or run["report"]["steps_done"] < run["report"]["steps_total"]
    done = {o["step_id"] for o in run["observations"] if o["ok"]}
    assert not any(s["command"] == "shake" and s["id"] in done for s in run["plan"]["steps"])
    pressed = [e for e in lab_audit if e["tool"] == "emergency_stop"]
    assert [e["agent"] for e in pressed] == ["person:viewer-1 (viewer)"]
    assert step in ("wait_for_temperature", "shake")
    world = SimWorld(load(slow_lab.lab_file).world_path)
    try:
        assert not world.status("hs1").get("shaking")  # the shaker is not moving
    finally:
        world.close()
