"""The product's import graph keeps its layers: no circles, nothing imports a higher layer,
and no product module grows past what one can read in a sitting."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _structure() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_structure", ROOT / "bench" / "structure.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_structure"] = module
    spec.loader.exec_module(module)
    return module


structure = _structure()


def test_the_product_has_no_import_circle() -> None:
    assert structure.circles(structure.build_graph()) == []


def test_no_module_imports_a_higher_layer() -> None:
    assert structure.upward(structure.build_graph()) == []


def test_the_checker_sees_a_circle_and_an_upward_import_when_there_are_some() -> None:
    graph = structure.Graph(
        files={m: ROOT for m in ("agents.a", "agents.b", "policies.p", "device_servers.x")},
        edges={
            "agents.a": {"agents.b"},
            "agents.b": {"agents.a", "device_servers.x"},
            "policies.p": {"state_store.s"},
            "device_servers.x": set(),
        },
    )
    assert structure.circles(graph) == [["agents.a", "agents.b"]]
    assert set(structure.upward(graph)) == {
        ("agents.b", "device_servers.x"),  # agents may import only device_servers.contract
        ("policies.p", "state_store.s"),  # policies import nothing else of the project
    }


def test_no_product_module_is_longer_than_one_can_read_in_a_sitting() -> None:
    over = [(n, m) for n, m in structure.sizes(structure.build_graph()) if n > 400]
    assert over == []
