"""What the CLI prints stays readable in an 80-column terminal: plate readings are never cut
to "2.…", however wide their values."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from labwright.cli._render import reading_grids


def _printed(reading: dict[str, object], width: int = 80) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    for table in reading_grids(reading, width):
        console.print(table)
    return console.export_text()


def _plate(value: float) -> dict[str, float]:
    return {f"{r}{c}": value / c for r in "ABCDEFGH" for c in range(1, 13)}


def test_a_96_well_absorbance_reading_fits_80_columns_with_every_digit() -> None:
    reading = {
        "mode": "absorbance",
        "plate": "plate_1",
        "wavelength_nm": 600,
        "unit": "OD",
        "simulated": True,
        "values": _plate(2.0134),
    }
    text = _printed(reading)
    assert "…" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "2.013" in text and "0.168" in text  # A1 and A12


def test_wide_fluorescence_counts_are_split_over_grids_not_cut() -> None:
    reading = {
        "mode": "fluorescence",
        "plate": "plate_1",
        "excitation_nm": 485,
        "emission_nm": 528,
        "unit": "RFU",
        "simulated": True,
        "values": _plate(123456.0),
    }
    text = _printed(reading)
    assert "…" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "123456" in text and "10288" in text  # A1 and A12 (123456 / 12)
    assert len(reading_grids(reading, 80)) > 1


def test_a_luminescence_reading_has_no_wavelength_in_its_title() -> None:
    reading = {
        "mode": "luminescence",
        "plate": "plate_1",
        "unit": "RLU",
        "simulated": True,
        "values": {"A1": 10.0},
    }
    assert "None" not in _printed(reading)


def test_the_evaluation_figures_fit_80_columns_without_cutting_a_figure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evals.report import _COLUMNS
    from labwright.cli import evaluate

    figures = {
        "scenarios": 12,
        "success_rate": 0.917,
        "pass_k": 0.833,
        "unsafe_events": 0,
        "clarification_precision": 1.0,
        "escalations": 3,
        "interventions": 2,
        "mean_s": 15.93,
        "p95_s": 37.39,
        "device_time_s": 14356.8,
    }
    assert {k for _, k in _COLUMNS} <= figures.keys()
    data = {
        "planner": "embedded rule planner",
        "categories": {"fault_recovery": figures},
        "overall": figures,
        "failing": [],
    }
    console = Console(width=80, record=True, file=io.StringIO())
    monkeypatch.setattr(evaluate, "out", console)
    evaluate.print_report(data)
    text = console.export_text()
    assert "…" not in text and all(len(line) <= 80 for line in text.splitlines())
    assert text.count("fault_recovery") == 2  # both halves of the figures, every category
    assert "14356.8" in text or "14,356.8" in text
