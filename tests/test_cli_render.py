"""What the CLI prints stays readable in an 80-column terminal: plate readings are never cut
to "2.…", however wide their values."""

from __future__ import annotations

import io

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
