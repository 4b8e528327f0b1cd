"""The liquid handler's standard procedures (MCP prompts of its server)."""

from __future__ import annotations

from device_servers.kind import Prompt, PromptArg


def _serial_dilution(instrument: str, args: dict[str, str]) -> str:
    missing = [a for a in ("plate", "row", "final_volume_ul") if not args.get(a)]
    if missing:
        raise ValueError(f"serial_dilution needs: {', '.join(missing)}")
    plate, row = args["plate"], args["row"].upper()
    fold = float(args.get("fold") or 2)
    final = float(args["final_volume_ul"])
    moved = final / (fold - 1) if fold > 1 else final
    return (
        f"Serial dilution on {instrument}, plate {plate}, row {row}, {fold:g}-fold, "
        f"{final:g} uL final volume per well:\n"
        f"1. get_state; check {plate}:{row}1 holds at least {final + moved:g} uL of the "
        f"stock and {row}2..{row}12 hold {final:g} uL of diluent.\n"
        f"2. For i from 1 to 11: transfer {moved:g} uL from {row}i to {row}(i+1) with "
        "mix_after=3, a new tip each time.\n"
        f"3. Remove {moved:g} uL from {row}12 so every well ends at {final:g} uL.\n"
        "4. Dry-run the whole list with start_run(dry_run=true); fix any error; then "
        "execute with dry_run=false and a run_key."
    )


PROMPTS = (
    Prompt(
        "serial_dilution",
        "Standard procedure: an n-step k-fold serial dilution along a row of a plate.",
        _serial_dilution,
        (
            PromptArg("plate", required=True),
            PromptArg("row", "Row letter, e.g. A", required=True),
            PromptArg("final_volume_ul", required=True),
            PromptArg("fold", "Default 2"),
        ),
    ),
)
